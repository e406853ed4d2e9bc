//! Checks a SigV4 signature as AWS does, written apart from Vaider's signer so the two check
//! each other: the Authorization header's form, the signed headers (`host` and `x-amz-date`
//! among them), the date and scope, the payload hash, then the signature recomputed with the
//! known secret. Each refusal carries AWS's own error type and wording.

use axum::http::HeaderMap;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// Why a request's signature was refused: (HTTP status, x-amzn-ErrorType, message).
pub(crate) type Refusal = (u16, &'static str, String);

/// What the fake knows: the one key pair it accepts and its region.
pub(crate) struct Expected<'a> {
    pub access_key_id: &'a str,
    pub secret: &'a str,
    pub region: &'a str,
    pub service: &'a str,
}

/// The parts of `AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/SERVICE/aws4_request,
/// SignedHeaders=a;b, Signature=<64 hex>`.
#[derive(Debug, PartialEq)]
pub(crate) struct Authorization {
    pub access_key_id: String,
    pub date: String,
    pub region: String,
    pub service: String,
    pub signed_headers: Vec<String>,
    pub signature: String,
}

fn incomplete(detail: &str) -> Refusal {
    (
        403,
        "IncompleteSignatureException",
        format!("Authorization header requires {detail}. Authorization=AWS4-HMAC-SHA256 ..."),
    )
}

pub(crate) fn parse_authorization(value: &str) -> Result<Authorization, Refusal> {
    let rest = value
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or_else(|| incomplete("the AWS4-HMAC-SHA256 algorithm"))?;
    let mut fields = std::collections::HashMap::new();
    for part in rest.split(", ") {
        if let Some((k, v)) = part.split_once('=') {
            fields.insert(k.trim(), v.trim());
        }
    }
    let credential = fields
        .get("Credential")
        .ok_or_else(|| incomplete("'Credential' parameter"))?;
    let scope: Vec<&str> = credential.split('/').collect();
    let [id, date, region, service, "aws4_request"] = scope[..] else {
        return Err(incomplete(
            "a Credential of AKID/DATE/REGION/SERVICE/aws4_request",
        ));
    };
    let signed = fields
        .get("SignedHeaders")
        .ok_or_else(|| incomplete("'SignedHeaders' parameter"))?;
    let signature = fields
        .get("Signature")
        .ok_or_else(|| incomplete("'Signature' parameter"))?;
    if signature.len() != 64
        || !signature
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return Err(incomplete("a Signature of 64 lower-case hex digits"));
    }
    Ok(Authorization {
        access_key_id: id.to_string(),
        date: date.to_string(),
        region: region.to_string(),
        service: service.to_string(),
        signed_headers: signed.split(';').map(str::to_string).collect(),
        signature: signature.to_string(),
    })
}

/// Checks the request; `raw_path` is the path as it arrived (still percent-encoded).
pub(crate) fn check(
    expected: &Expected,
    method: &str,
    raw_path: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Authorization, Refusal> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let auth = parse_authorization(header("authorization").ok_or((
        403,
        "MissingAuthenticationTokenException",
        "Missing Authentication Token".to_string(),
    ))?)?;
    check_scope(expected, &auth)?;
    let amz_date = check_signed_headers(&auth, &header)?;
    let payload_hash = hex::encode(Sha256::digest(body));
    if let Some(claimed) = header("x-amz-content-sha256") {
        if claimed != payload_hash {
            return Err((
                400,
                "ValidationException",
                "The provided 'x-amz-content-sha256' header does not match what was computed."
                    .into(),
            ));
        }
    }
    let recomputed = signature(
        expected.secret,
        &auth,
        method,
        raw_path,
        headers,
        &payload_hash,
        amz_date,
    );
    if recomputed != auth.signature {
        return Err((403, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.".into()));
    }
    Ok(auth)
}

/// The credential is the expected key's, scoped to the expected service and region.
fn check_scope(expected: &Expected, auth: &Authorization) -> Result<(), Refusal> {
    if auth.access_key_id != expected.access_key_id {
        return Err((
            403,
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".into(),
        ));
    }
    if auth.service != expected.service || auth.region != expected.region {
        return Err((
            403,
            "InvalidSignatureException",
            format!(
                "Credential should be scoped to correct service: '{}' and a valid region: '{}'.",
                expected.service, expected.region
            ),
        ));
    }
    Ok(())
}

/// The headers that must be signed are, and the date header matches the credential's day;
/// returns the date header.
fn check_signed_headers<'a>(
    auth: &Authorization,
    header: &impl Fn(&str) -> Option<&'a str>,
) -> Result<&'a str, Refusal> {
    for needed in ["host", "x-amz-date"] {
        if !auth.signed_headers.iter().any(|h| h == needed) {
            return Err(incomplete(&format!("'{needed}' among the SignedHeaders")));
        }
    }
    if header("x-amz-security-token").is_some()
        && !auth
            .signed_headers
            .iter()
            .any(|h| h == "x-amz-security-token")
    {
        return Err(incomplete("the x-amz-security-token header to be signed"));
    }
    let amz_date = header("x-amz-date").unwrap_or("");
    if amz_date.len() != 16 || !amz_date.starts_with(&auth.date) {
        return Err((403, "InvalidSignatureException", format!(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{amz_date}'.",
            auth.date
        )));
    }
    Ok(amz_date)
}

fn signature(
    secret: &str,
    auth: &Authorization,
    method: &str,
    raw_path: &str,
    headers: &HeaderMap,
    payload_hash: &str,
    amz_date: &str,
) -> String {
    let mut canonical_headers = String::new();
    for name in &auth.signed_headers {
        let values: Vec<String> = headers
            .get_all(name.as_str())
            .iter()
            .map(|v| {
                String::from_utf8_lossy(v.as_bytes())
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        canonical_headers.push_str(&format!("{name}:{}\n", values.join(",")));
    }
    // Every service but S3 signs the path encoded once more than it is sent.
    let canonical_path: String = raw_path
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let canonical = format!(
        "{method}\n{canonical_path}\n\n{canonical_headers}\n{}\n{payload_hash}",
        auth.signed_headers.join(";")
    );
    let scope = format!(
        "{}/{}/{}/aws4_request",
        auth.date, auth.region, auth.service
    );
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex::encode(Sha256::digest(canonical.as_bytes()))
    );
    let mut key = mac(format!("AWS4{secret}").as_bytes(), auth.date.as_bytes());
    for part in [auth.region.as_str(), auth.service.as_str(), "aws4_request"] {
        key = mac(&key, part.as_bytes());
    }
    hex::encode(mac(&key, to_sign.as_bytes()))
}

fn mac(key: &[u8], data: &[u8]) -> Vec<u8> {
    match <Hmac<Sha256> as KeyInit>::new_from_slice(key) {
        Ok(mut m) => {
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorization_header_is_read_and_its_form_checked() {
        let auth = parse_authorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31").unwrap();
        assert_eq!(auth.region, "us-east-1");
        assert_eq!(auth.signed_headers, ["host", "x-amz-date"]);
        for bad in [
            "Bearer x",
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/bedrock, SignedHeaders=host, Signature=00",
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=XYZ",
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/bedrock/aws4_request, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ] {
            assert!(parse_authorization(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_aws_get_vanilla_vector_passes_and_a_changed_secret_fails() {
        let mut headers = HeaderMap::new();
        headers.insert("host", "example.amazonaws.com".parse().unwrap());
        headers.insert("x-amz-date", "20150830T123600Z".parse().unwrap());
        headers.insert("authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31".parse().unwrap());
        let mut expected = Expected {
            access_key_id: "AKIDEXAMPLE",
            secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            region: "us-east-1",
            service: "service",
        };
        assert!(check(&expected, "GET", "/", &headers, b"").is_ok());
        expected.secret = "wrong";
        let refused = check(&expected, "GET", "/", &headers, b"").unwrap_err();
        assert_eq!((refused.0, refused.1), (403, "InvalidSignatureException"));
    }
}
