//! A real HTTPS webhook receiver on loopback: a test CA (rcgen), rustls, hyper. It records every
//! request and answers from a script (status codes, Retry-After, redirects, hangs, huge bodies,
//! connection resets), 200 when the script is empty.

use bytes::Bytes;
use futures::StreamExt as _;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the receiver answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// This status, empty body.
    Status(u16),
    /// This status with `Retry-After: <secs>`.
    RetryAfter(u16, u64),
    /// 302 to this location.
    Redirect(String),
    /// Wait this long before answering 200 (longer than the client's timeout = a hang).
    Hang(Duration),
    /// 200 with an endless body.
    HugeBody,
    /// Drop the connection without answering.
    Reset,
    /// 200 with this content type and body.
    Body(String, Vec<u8>),
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Request path.
    pub path: String,
    /// Headers.
    pub headers: hyper::HeaderMap,
    /// Raw body bytes, exactly as received.
    pub body: Bytes,
}

type BoxBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

/// A running receiver.
pub struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The CA certificate (PEM file) that signed its certificate.
    pub ca_path: PathBuf,
    requests: Arc<Mutex<Vec<Recorded>>>,
    script: Arc<Mutex<VecDeque<Reply>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// Starts a receiver with a fresh CA whose PEM is written into `dir`.
    pub async fn start(dir: &std::path::Path) -> Self {
        let ca = mailward_testkit::TestCa::new("Mailward Test CA");
        let ca_cert = ca.cert();
        let mailward_testkit::Leaf {
            cert: leaf,
            key: leaf_key,
        } = ca.leaf("localhost");
        let ca_path = dir.join(format!("test-ca-{}.pem", uuid::Uuid::new_v4()));
        std::fs::write(&ca_path, ca_cert.pem()).expect("write ca");

        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocols")
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone(), ca_cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::new()));
        let (req_log, script_ref) = (Arc::clone(&requests), Arc::clone(&script));
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let (req_log, script_ref) = (Arc::clone(&req_log), Arc::clone(&script_ref));
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = service_fn(move |req: Request<Incoming>| {
                        let (req_log, script_ref) = (Arc::clone(&req_log), Arc::clone(&script_ref));
                        async move { handle(req, req_log, script_ref).await }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Self {
            addr,
            ca_path,
            requests,
            script,
            task,
        }
    }

    /// The URL to register (`https://localhost:<port><path>`).
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{}", self.addr.port(), path)
    }

    /// Queues replies for the next requests.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.script.lock().expect("script").extend(replies);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("requests").clone()
    }

    /// Waits until at least `n` requests arrived (up to `timeout`), then returns them all.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let got = self.requests();
            if got.len() >= n || tokio::time::Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[derive(Debug)]
struct ResetConnection;

impl std::fmt::Display for ResetConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("reset")
    }
}

impl std::error::Error for ResetConnection {}

async fn handle(
    req: Request<Incoming>,
    log: Arc<Mutex<Vec<Recorded>>>,
    script: Arc<Mutex<VecDeque<Reply>>>,
) -> Result<Response<BoxBody>, ResetConnection> {
    let path = req.uri().path().to_owned();
    let headers = req.headers().clone();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    log.lock().expect("log").push(Recorded {
        path,
        headers,
        body,
    });
    let reply = script
        .lock()
        .expect("script")
        .pop_front()
        .unwrap_or(Reply::Status(200));
    let empty = || {
        Full::new(Bytes::new())
            .map_err(|never: Infallible| match never {})
            .boxed()
    };
    let response = match reply {
        Reply::Status(code) => Response::builder().status(code).body(empty()),
        Reply::RetryAfter(code, secs) => Response::builder()
            .status(code)
            .header("retry-after", secs.to_string())
            .body(empty()),
        Reply::Redirect(location) => Response::builder()
            .status(302)
            .header("location", location)
            .body(empty()),
        Reply::Hang(duration) => {
            tokio::time::sleep(duration).await;
            Response::builder().status(200).body(empty())
        }
        Reply::HugeBody => {
            let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
            let stream = futures::stream::repeat_with(move || {
                Ok::<_, std::io::Error>(Frame::data(chunk.clone()))
            })
            .take(100_000);
            Response::builder()
                .status(200)
                .body(BoxBody::new(StreamBody::new(stream)))
        }
        Reply::Reset => return Err(ResetConnection),
        Reply::Body(content_type, bytes) => Response::builder()
            .status(200)
            .header("content-type", content_type)
            .body(
                Full::new(Bytes::from(bytes))
                    .map_err(|never: Infallible| match never {})
                    .boxed(),
            ),
    };
    Ok(response.expect("response"))
}
