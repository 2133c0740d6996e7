//! Mailward's AWS adapters.
//!
//! This crate owns everything that talks to AWS: the DynamoDB [`ItemStore`](mailward_domain::store::ItemStore)
//! ([`DynamoStore`]), the SQS [`Queue`](mailward_domain::queue::Queue) ([`SqsQueue`]), the SES
//! [`Mailer`](mailward_domain::mailer::Mailer) ([`SesMailer`]), the S3
//! [`ObjectStore`](mailward_domain::objects::ObjectStore) ([`S3ObjectStore`]) and the SDK configuration
//! ([`aws_config_from_env`]). It is the only crate that imports `aws-sdk-*`; handlers and the
//! rest of the workspace see the domain ports only. Table and queue bootstrapping helpers
//! ([`create_table`], [`create_queues`]) serve tests against moto and local set-ups; production
//! resources come from the deployment template.

mod config;
pub mod dns_hosts;
mod dynamo;
pub mod policy_fronts;
pub mod route53;
mod s3;
mod ses;
mod sqs;
mod wiring;

pub use config::{ENDPOINT_ENV, aws_config_from_env, emulator_config};
pub use dynamo::{DynamoStore, create_table};
pub use s3::S3ObjectStore;
pub use ses::SesMailer;
pub use sqs::{QueueUrls, SqsQueue, create_queues};
pub use wiring::{AwsPorts, ports_from_env};
