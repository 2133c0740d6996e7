//! The local stack's authoritative DNS server for the records Mailward serves (`--dns-listen`,
//! `MAILWARD_DNS_LISTEN`): it answers from the hosted-zone port, so
//! `dig @127.0.0.1 -p PORT TXT example.com._dmarc.<hosted zone>` shows exactly what a customer's
//! CNAME reaches. It is authoritative for the hosted zone and the report host (the RFC 9989
//! report authorizations), refuses other names, and answers NXDOMAIN for names it has nothing
//! at.

use hickory_server::Server;
use hickory_server::net::runtime::Time;
use hickory_server::proto::op::{Header, HeaderCounts, Metadata, ResponseCode};
use hickory_server::proto::rr::rdata::{CNAME, TXT};
use hickory_server::proto::rr::{Name, RData, Record, RecordType};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::zone_handler::MessageResponseBuilder;
use mailward_domain::hosted_zone::{HostedZone, ZoneRecord, ZoneRecordKind, normalize};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, UdpSocket};

/// The running server; stops when dropped.
pub struct ZoneServer {
    addr: SocketAddr,
    _server: Server<ZoneHandler>,
}

impl ZoneServer {
    /// Listens on `listen` (UDP and TCP on the same port; port 0 picks one) for `apexes`.
    pub async fn start(
        listen: SocketAddr,
        zone: Arc<dyn HostedZone>,
        apexes: Vec<String>,
    ) -> std::io::Result<Self> {
        let (udp, tcp) = bind(listen).await?;
        let addr = udp.local_addr()?;
        let mut server = Server::new(ZoneHandler {
            zone,
            apexes: apexes.iter().map(|a| normalize(a)).collect(),
        });
        server.register_socket(udp);
        server.register_listener(tcp, Duration::from_secs(5), 64);
        Ok(Self {
            addr,
            _server: server,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// How many ports to try when `listen` asks for any port: UDP picks one, and the same number
/// may be taken for TCP.
const BIND_TRIES: usize = 20;

/// Binds UDP and TCP on the same port (any free one when the port is 0).
async fn bind(listen: SocketAddr) -> std::io::Result<(UdpSocket, TcpListener)> {
    let tries = if listen.port() == 0 { BIND_TRIES } else { 1 };
    let mut last = None;
    for _ in 0..tries {
        let udp = UdpSocket::bind(listen).await?;
        match TcpListener::bind(udp.local_addr()?).await {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free port")))
}

/// Answers queries from the hosted zone.
pub struct ZoneHandler {
    zone: Arc<dyn HostedZone>,
    apexes: Vec<String>,
}

fn failure(request: &Request, code: ResponseCode) -> ResponseInfo {
    let mut metadata = Metadata::response_from_request(&request.metadata);
    metadata.response_code = code;
    ResponseInfo::from(Header {
        metadata,
        counts: HeaderCounts::default(),
    })
}

fn to_records(owner: &Name, set: &ZoneRecord) -> Vec<Record> {
    set.values
        .iter()
        .filter_map(|value| {
            let rdata = match set.kind {
                ZoneRecordKind::Txt => {
                    RData::TXT(TXT::new(mailward_dmarc::to_character_strings(value)))
                }
                ZoneRecordKind::Cname => {
                    let mut target = Name::from_ascii(value).ok()?;
                    target.set_fqdn(true);
                    RData::CNAME(CNAME(target))
                }
            };
            Some(Record::from_rdata(owner.clone(), set.ttl, rdata))
        })
        .collect()
}

impl ZoneHandler {
    fn serves(&self, name: &str) -> bool {
        self.apexes
            .iter()
            .any(|apex| name == apex || name.ends_with(&format!(".{apex}")))
    }
}

#[async_trait::async_trait]
impl RequestHandler for ZoneHandler {
    async fn handle_request<R: ResponseHandler, T: Time>(
        &self,
        request: &Request,
        mut response_handle: R,
    ) -> ResponseInfo {
        let Ok(info) = request.request_info() else {
            return failure(request, ResponseCode::FormErr);
        };
        let owner = info.query.name().to_owned();
        let owner: Name = owner.into();
        let qtype = info.query.query_type();
        let name = normalize(&owner.to_string());
        if !self.serves(&name) {
            let response = MessageResponseBuilder::from_message_request(request)
                .error_msg(&request.metadata, ResponseCode::Refused);
            return response_handle
                .send_response(response)
                .await
                .unwrap_or_else(|_| failure(request, ResponseCode::ServFail));
        }
        let sets = match self.zone.records(&name).await {
            Ok(sets) => sets,
            Err(error) => {
                tracing::warn!(%error, %name, "hosted zone unavailable");
                return failure(request, ResponseCode::ServFail);
            }
        };
        // A CNAME answers every type but itself; otherwise the asked type's set.
        let answers: Vec<Record> = sets
            .iter()
            .filter(|set| {
                matches!(
                    (set.kind, qtype),
                    (ZoneRecordKind::Cname, _)
                        | (ZoneRecordKind::Txt, RecordType::TXT | RecordType::ANY)
                )
            })
            .flat_map(|set| to_records(&owner, set))
            .collect();
        let mut metadata = Metadata::response_from_request(&request.metadata);
        metadata.authoritative = true;
        metadata.response_code = if sets.is_empty() {
            ResponseCode::NXDomain
        } else {
            ResponseCode::NoError
        };
        let response = MessageResponseBuilder::from_message_request(request).build(
            metadata,
            answers.iter(),
            std::iter::empty(),
            std::iter::empty(),
            std::iter::empty(),
        );
        response_handle
            .send_response(response)
            .await
            .unwrap_or_else(|_| failure(request, ResponseCode::ServFail))
    }
}
