//! What talking to AWS needs without the AWS SDK: Signature Version 4 and the standard
//! credential and region chain. Used by the Bedrock adapter.

pub mod credentials;
pub mod sigv4;

pub use credentials::{resolve, AwsChoice, AwsCredentials, AwsSetup};
