//! The request handler: records the query, applies injected faults, then lets hickory's catalog
//! answer from the current zones.

use crate::faults::{Fault, Faults};
use hickory_server::net::runtime::Time;
use hickory_server::net::xfer::Protocol;
use hickory_server::proto::op::{Header, HeaderCounts, Metadata, ResponseCode};
use hickory_server::proto::rr::RecordType as HickoryType;
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::zone_handler::{Catalog, MessageResponseBuilder};
use mailward_domain::dns::RecordType;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The transport a query arrived on; tests check that truncation moved a query to TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// UDP.
    Udp,
    /// TCP (or anything that is not UDP).
    Tcp,
}

/// One query the server received, so tests can count what reached the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryLog {
    /// The name asked, lower-case without the trailing dot.
    pub name: String,
    /// The type asked, as hickory spells it (`"TXT"`, `"MX"`...).
    pub record_type: String,
    /// How the query arrived.
    pub transport: Transport,
}

/// State shared by the handler and the [`FixtureServer`](crate::FixtureServer).
#[derive(Default)]
pub(crate) struct State {
    pub(crate) catalog: RwLock<Arc<Catalog>>,
    pub(crate) faults: Mutex<Faults>,
    pub(crate) log: Mutex<Vec<QueryLog>>,
    /// Queries received (counted even when the log is off).
    pub(crate) query_count: AtomicUsize,
    /// Off: only count queries (a benchmark sending millions keeps its memory for the service).
    pub(crate) log_off: std::sync::atomic::AtomicBool,
    in_flight: AtomicUsize,
    pub(crate) peak_in_flight: AtomicUsize,
}

/// Counts a query as in flight for as long as it lives.
pub(crate) struct InFlight(Arc<State>);

impl InFlight {
    pub(crate) fn enter(state: &Arc<State>) -> Self {
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(Arc::clone(state))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The hickory request handler of a fixture server.
pub(crate) struct FixtureHandler {
    pub(crate) state: Arc<State>,
}

pub(crate) fn port_type(record_type: HickoryType) -> Option<RecordType> {
    Some(match record_type {
        HickoryType::A => RecordType::A,
        HickoryType::AAAA => RecordType::Aaaa,
        HickoryType::MX => RecordType::Mx,
        HickoryType::TXT => RecordType::Txt,
        HickoryType::CNAME => RecordType::Cname,
        HickoryType::NS => RecordType::Ns,
        HickoryType::PTR => RecordType::Ptr,
        HickoryType::SOA => RecordType::Soa,
        HickoryType::TLSA => RecordType::Tlsa,
        HickoryType::DNSKEY => RecordType::Dnskey,
        _ => return None,
    })
}

fn no_response(request: &Request) -> ResponseInfo {
    let mut metadata = Metadata::response_from_request(&request.metadata);
    metadata.response_code = ResponseCode::ServFail;
    ResponseInfo::from(Header {
        metadata,
        counts: HeaderCounts::default(),
    })
}

#[async_trait::async_trait]
impl RequestHandler for FixtureHandler {
    async fn handle_request<R: ResponseHandler, T: Time>(
        &self,
        request: &Request,
        mut response_handle: R,
    ) -> ResponseInfo {
        let _in_flight = InFlight::enter(&self.state);
        let transport = match request.protocol() {
            Protocol::Udp => Transport::Udp,
            _ => Transport::Tcp,
        };
        let plan = match request.request_info() {
            Ok(info) => {
                let name = crate::rdata::canonical(&info.query.name().to_string());
                let qtype = info.query.query_type();
                self.state.query_count.fetch_add(1, Ordering::Relaxed);
                if !self.state.log_off.load(Ordering::Relaxed)
                    && let Ok(mut log) = self.state.log.lock()
                {
                    log.push(QueryLog {
                        name: name.clone(),
                        record_type: qtype.to_string(),
                        transport,
                    });
                }
                self.state
                    .faults
                    .lock()
                    .map(|mut f| f.plan(&name, port_type(qtype), transport == Transport::Udp))
                    .unwrap_or_default()
            }
            Err(_) => Default::default(),
        };
        if !plan.latency.is_zero() {
            tokio::time::sleep(plan.latency).await;
        }
        let code = match plan.action {
            Some(Fault::Timeout) => return no_response(request),
            Some(Fault::ServFail) => Some(ResponseCode::ServFail),
            Some(Fault::Refused) => Some(ResponseCode::Refused),
            Some(Fault::Truncate) if transport == Transport::Udp => {
                let mut metadata = Metadata::response_from_request(&request.metadata);
                metadata.truncation = true;
                metadata.authoritative = true;
                let response = MessageResponseBuilder::from_message_request(request)
                    .build_no_records(metadata);
                return response_handle
                    .send_response(response)
                    .await
                    .unwrap_or_else(|_| no_response(request));
            }
            _ => None,
        };
        if let Some(code) = code {
            let response = MessageResponseBuilder::from_message_request(request)
                .error_msg(&request.metadata, code);
            return response_handle
                .send_response(response)
                .await
                .unwrap_or_else(|_| no_response(request));
        }
        let catalog = match self.state.catalog.read() {
            Ok(catalog) => Arc::clone(&catalog),
            Err(_) => return no_response(request),
        };
        catalog
            .handle_request::<R, T>(request, response_handle)
            .await
    }
}
