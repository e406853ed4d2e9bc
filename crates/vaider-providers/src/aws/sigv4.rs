//! AWS Signature Version 4: the canonical request, the string to sign, the signing key chain
//! and the `Authorization` header, for any AWS service (Bedrock uses `bedrock`). Written from
//! AWS's description of the process and checked against AWS's published test-suite vectors,
//! so Vaider needs no AWS SDK.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::credentials::AwsCredentials;

pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// One HTTP request as it will be sent, in the parts SigV4 signs.
pub struct SigningRequest<'a> {
    pub method: &'a str,
    /// The path exactly as sent on the wire (already percent-encoded where needed). For every
    /// service but S3 its canonical form encodes it once more, as AWS requires.
    pub path: &'a str,
    /// Query parameters, not yet encoded.
    pub query: &'a [(String, String)],
    /// The headers to sign, `host` among them (names in any case).
    pub headers: &'a [(String, String)],
    pub payload: &'a [u8],
}

/// Where and when the signature is valid.
pub struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    pub time: chrono::DateTime<chrono::Utc>,
}

/// The headers to add to the request so AWS accepts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// `x-amz-date`, `x-amz-security-token` (for temporary credentials), `authorization`.
    pub headers: Vec<(&'static str, String)>,
    /// The 64 hex digits alone, for tests and for checking a signature.
    pub signature: String,
    /// `host;x-amz-date;...`
    pub signed_headers: String,
}

/// Signs `request`: the session token (if any) and `x-amz-date` are signed with the given
/// headers; the returned headers must be added unchanged.
pub fn sign(request: &SigningRequest, credentials: &AwsCredentials, scope: &Scope) -> Signature {
    let amz_date = scope.time.format("%Y%m%dT%H%M%SZ").to_string();
    let date = scope.time.format("%Y%m%d").to_string();
    let mut headers = request.headers.to_vec();
    headers.push(("x-amz-date".to_string(), amz_date.clone()));
    if let Some(token) = credentials.session_token() {
        headers.push(("x-amz-security-token".to_string(), token.to_string()));
    }
    let (canonical, signed_headers) = canonical_request(request, &headers);
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{credential_scope}\n{}",
        sha256_hex(canonical.as_bytes())
    );
    let key = signing_key(
        credentials.secret_access_key(),
        &date,
        scope.region,
        scope.service,
    );
    let signature = hex::encode(hmac_sha256(&key, string_to_sign.as_bytes()));
    let mut out = vec![("x-amz-date", amz_date)];
    if let Some(token) = credentials.session_token() {
        out.push(("x-amz-security-token", token.to_string()));
    }
    out.push((
        "authorization",
        format!(
            "{ALGORITHM} Credential={}/{credential_scope}, SignedHeaders={signed_headers}, Signature={signature}",
            credentials.access_key_id
        ),
    ));
    Signature {
        headers: out,
        signature,
        signed_headers,
    }
}

/// The canonical request and its signed-headers list.
pub fn canonical_request(
    request: &SigningRequest,
    headers: &[(String, String)],
) -> (String, String) {
    let mut sorted: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), collapse_spaces(v)))
        .collect();
    // A stable sort keeps repeated headers in their order, as their values are joined.
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut lines: Vec<(String, String)> = Vec::new();
    for (name, value) in sorted {
        match lines.last_mut() {
            Some((last, joined)) if *last == name => {
                joined.push(',');
                joined.push_str(&value);
            }
            _ => lines.push((name, value)),
        }
    }
    let canonical_headers: String = lines.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed_headers = lines
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{}",
        request.method,
        uri_encode(request.path, false),
        canonical_query(request.query),
        sha256_hex(request.payload)
    );
    (canonical, signed_headers)
}

fn canonical_query(query: &[(String, String)]) -> String {
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (uri_encode(k, true), uri_encode(v, true)))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// Header values are trimmed and their runs of spaces become one.
fn collapse_spaces(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// AWS's URI encoding: unreserved characters stay, everything else becomes `%XX` of its UTF-8
/// bytes; `/` stays unless `encode_slash` (a path keeps its separators, a query value does not).
pub fn uri_encode(text: &str, encode_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            b'/' if !encode_slash => out.push('/'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k_date = hmac_sha256(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_service = hmac_sha256(&k_region, service.as_bytes());
    hmac_sha256(&k_service, b"aws4_request")
}

pub fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length (longer keys are hashed first), so this cannot fail; the
    // fallback only keeps a panic off the request path.
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        return [0; 32];
    };
    mac.update(data);
    mac.finalize().into_bytes().into()
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

#[cfg(test)]
mod tests {
    //! AWS's SigV4 test suite (aws-sig-v4-test-suite, as shipped with botocore and the CRT):
    //! credentials AKIDEXAMPLE, region us-east-1, service `service`, 2015-08-30 12:36:00 UTC.
    use super::*;
    use chrono::TimeZone;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const TOKEN: &str = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";

    fn scope() -> Scope<'static> {
        Scope {
            region: "us-east-1",
            service: "service",
            time: chrono::Utc
                .with_ymd_and_hms(2015, 8, 30, 12, 36, 0)
                .unwrap(),
        }
    }

    fn suite(
        method: &str,
        path: &str,
        query: &[(&str, &str)],
        extra: &[(&str, &str)],
        body: &[u8],
        token: Option<&str>,
    ) -> Signature {
        let query: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut headers = vec![("Host".to_string(), "example.amazonaws.com".to_string())];
        headers.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let credentials = AwsCredentials::new("AKIDEXAMPLE", SECRET, token, "test");
        let request = SigningRequest {
            method,
            path,
            query: &query,
            headers: &headers,
            payload: body,
        };
        sign(&request, &credentials, &scope())
    }

    fn authorization(signature: &Signature) -> &str {
        &signature
            .headers
            .iter()
            .find(|(k, _)| *k == "authorization")
            .unwrap()
            .1
    }

    #[test]
    fn get_vanilla() {
        let signed = suite("GET", "/", &[], &[], b"", None);
        assert_eq!(
            authorization(&signed),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
        assert_eq!(
            signed.headers[0],
            ("x-amz-date", "20150830T123600Z".to_string())
        );
    }

    #[test]
    fn get_vanilla_query_order_key_case() {
        let signed = suite(
            "GET",
            "/",
            &[("Param2", "value2"), ("Param1", "value1")],
            &[],
            b"",
            None,
        );
        assert_eq!(
            signed.signature,
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
        );
    }

    #[test]
    fn get_utf8() {
        let signed = suite("GET", "/ሴ", &[], &[], b"", None);
        assert_eq!(
            signed.signature,
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"
        );
    }

    #[test]
    fn post_vanilla_and_post_vanilla_query() {
        let signed = suite("POST", "/", &[], &[], b"", None);
        assert_eq!(
            signed.signature,
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
        let signed = suite("POST", "/", &[("Param1", "value1")], &[], b"", None);
        assert_eq!(
            signed.signature,
            "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"
        );
    }

    #[test]
    fn post_x_www_form_urlencoded_signs_the_body() {
        let signed = suite(
            "POST",
            "/",
            &[],
            &[("Content-Type", "application/x-www-form-urlencoded")],
            b"Param1=value1",
            None,
        );
        assert_eq!(signed.signed_headers, "content-type;host;x-amz-date");
        assert_eq!(
            signed.signature,
            "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"
        );
    }

    #[test]
    fn post_sts_header_before_signs_the_session_token() {
        let signed = suite("POST", "/", &[], &[], b"", Some(TOKEN));
        assert_eq!(
            signed.signed_headers,
            "host;x-amz-date;x-amz-security-token"
        );
        assert_eq!(
            signed.signature,
            "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
        );
        assert!(signed
            .headers
            .contains(&("x-amz-security-token", TOKEN.to_string())));
    }

    #[test]
    fn bedrock_paths_are_encoded_twice_in_the_canonical_request() {
        // A model id's colon is sent as %3A; the canonical path encodes the % again.
        let request = SigningRequest {
            method: "POST",
            path: "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse",
            query: &[],
            headers: &[("host".into(), "h".into())],
            payload: b"{}",
        };
        let (canonical, _) = canonical_request(&request, request.headers);
        assert!(
            canonical.contains("\n/model/anthropic.claude-3-5-sonnet-20241022-v2%253A0/converse\n"),
            "{canonical}"
        );
    }

    #[test]
    fn header_values_are_trimmed_and_repeats_joined() {
        let request = SigningRequest {
            method: "GET",
            path: "/",
            query: &[],
            headers: &[],
            payload: b"",
        };
        let headers = [
            ("My-Header1".to_string(), "  a   b   c ".to_string()),
            ("my-header1".to_string(), "d".to_string()),
        ];
        let (canonical, signed) = canonical_request(&request, &headers);
        assert!(canonical.contains("my-header1:a b c,d\n"), "{canonical}");
        assert_eq!(signed, "my-header1");
    }
}
