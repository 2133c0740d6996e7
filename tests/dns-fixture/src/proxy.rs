//! The front of a real server: a UDP and TCP relay on the fixture's address that logs each
//! query, applies the injected faults (latency, silence, SERVFAIL, REFUSED, forced truncation)
//! and passes the rest to the server, so the fixture's fault injection works the same over NSD.
//!
//! The relay must not be where datagrams are lost: its socket is drained by one task that only
//! reads and hands each datagram on, with a large receive buffer.

use crate::faults::Fault;
use crate::handler::{InFlight, QueryLog, State, Transport};
use hickory_server::proto::op::{Message, MessageType, ResponseCode};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::task::JoinHandle;

/// How long the relay waits for the server's answer to one query.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(5);

/// The relay's tasks; aborted when dropped.
pub(crate) struct Proxy {
    addr: SocketAddr,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Proxy {
    /// Listens on `ip` (a free port, the same for UDP and TCP) and relays to `upstream`'s
    /// current value.
    pub(crate) async fn start(
        ip: IpAddr,
        upstream: Arc<Mutex<SocketAddr>>,
        state: Arc<State>,
    ) -> std::io::Result<Self> {
        let (udp, tcp) = bind(ip).await?;
        let addr = udp.local_addr()?;
        enlarge_receive_buffer(&udp);
        let udp = Arc::new(udp);
        let relay = Arc::new(Relay {
            socket: UdpSocket::bind((IpAddr::from([127, 0, 0, 1]), 0)).await?,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU16::new(0),
        });
        enlarge_receive_buffer(&relay.socket);
        let answers_task = tokio::spawn(relay_answers(Arc::clone(&relay), Arc::clone(&udp)));
        let udp_task = tokio::spawn(serve_udp(
            Arc::clone(&udp),
            Arc::clone(&upstream),
            Arc::clone(&state),
            relay,
        ));
        let tcp_task = tokio::spawn(serve_tcp(tcp, upstream, state));
        Ok(Self {
            addr,
            tasks: vec![answers_task, udp_task, tcp_task],
        })
    }

    /// Where clients send their queries.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

async fn bind(ip: IpAddr) -> std::io::Result<(UdpSocket, TcpListener)> {
    let mut last = None;
    for _ in 0..20 {
        let udp = UdpSocket::bind((ip, 0)).await?;
        let port = udp.local_addr()?.port();
        match TcpListener::bind((ip, port)).await {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free port")))
}

/// Asks for a 4 MiB receive buffer (the kernel caps it at `net.core.rmem_max`): bursts of a
/// thousand queries must wait in the socket, not be dropped by it.
pub(crate) fn enlarge_receive_buffer(socket: &UdpSocket) {
    let _ = socket2::SockRef::from(socket).set_recv_buffer_size(4 << 20);
}

/// What to do with one query: its log entry, then the fault plan.
fn plan(
    state: &State,
    message: &[u8],
    transport: Transport,
) -> (crate::faults::Plan, Option<Message>) {
    let Ok(request) = Message::from_vec(message) else {
        return (Default::default(), None);
    };
    let Some(query) = request.queries.first() else {
        return (Default::default(), Some(request));
    };
    let name = crate::rdata::canonical(&query.name.to_string());
    let qtype = query.query_type;
    state.query_count.fetch_add(1, Ordering::Relaxed);
    if !state.log_off.load(Ordering::Relaxed)
        && let Ok(mut log) = state.log.lock()
    {
        log.push(QueryLog {
            name: name.clone(),
            record_type: qtype.to_string(),
            transport,
        });
    }
    let plan = state
        .faults
        .lock()
        .map(|mut f| {
            f.plan(
                &name,
                crate::handler::port_type(qtype),
                transport == Transport::Udp,
            )
        })
        .unwrap_or_default();
    (plan, Some(request))
}

/// A reply made by the relay itself: the request's ID and question, with `code` (and TC set for
/// a forced truncation).
fn reply(request: &Message, code: ResponseCode, truncated: bool) -> Option<Vec<u8>> {
    let mut response = Message::new(
        request.metadata.id,
        MessageType::Response,
        request.metadata.op_code,
    );
    response.metadata.recursion_desired = request.metadata.recursion_desired;
    response.metadata.response_code = code;
    response.metadata.truncation = truncated;
    response.metadata.authoritative = truncated;
    response.queries = request.queries.clone();
    response.to_vec().ok()
}

enum Action {
    Drop,
    Reply(Vec<u8>),
    Forward,
}

async fn act(state: &State, message: &[u8], transport: Transport) -> Action {
    let (plan, request) = plan(state, message, transport);
    if !plan.latency.is_zero() {
        tokio::time::sleep(plan.latency).await;
    }
    let Some(request) = request else {
        return Action::Forward;
    };
    let made = match plan.action {
        Some(Fault::Timeout) => return Action::Drop,
        Some(Fault::ServFail) => reply(&request, ResponseCode::ServFail, false),
        Some(Fault::Refused) => reply(&request, ResponseCode::Refused, false),
        Some(Fault::Truncate) if transport == Transport::Udp => {
            reply(&request, ResponseCode::NoError, true)
        }
        _ => return Action::Forward,
    };
    made.map_or(Action::Drop, Action::Reply)
}

/// The UDP path to the server: one socket for every forwarded query (a socket per query would
/// cost the relay more than the service it measures), each query's ID replaced by one of the
/// relay's own so answers to different clients never collide, and put back on the way out.
struct Relay {
    socket: UdpSocket,
    /// Relay ID → (client, the client's ID, when it was sent, the query counted in flight until
    /// its answer comes).
    pending: Mutex<HashMap<u16, (SocketAddr, u16, Instant, InFlight)>>,
    next_id: AtomicU16,
}

impl Relay {
    /// Sends `message` on for `client`; false when no ID is free (65,536 unanswered queries).
    async fn forward(
        &self,
        server: SocketAddr,
        client: SocketAddr,
        message: &mut [u8],
        in_flight: InFlight,
    ) -> bool {
        let Some(id_bytes) = message.first_chunk::<2>() else {
            return false;
        };
        let original = u16::from_be_bytes(*id_bytes);
        let id = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            if pending.len() > 30_000 {
                // Queries the server never answered (dropped as faults, or lost) are forgotten.
                pending.retain(|_, (_, _, at, _)| at.elapsed() < UPSTREAM_TIMEOUT);
            }
            let mut found = None;
            let mut in_flight = Some(in_flight);
            for _ in 0..=u16::MAX {
                let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                if let std::collections::hash_map::Entry::Vacant(slot) = pending.entry(id)
                    && let Some(counted) = in_flight.take()
                {
                    slot.insert((client, original, Instant::now(), counted));
                    found = Some(id);
                    break;
                }
            }
            match found {
                Some(id) => id,
                None => return false,
            }
        };
        message[..2].copy_from_slice(&id.to_be_bytes());
        self.socket.send_to(message, server).await.is_ok()
    }
}

/// Hands the server's answers back to their clients, with the clients' IDs.
async fn relay_answers(relay: Arc<Relay>, front: Arc<UdpSocket>) {
    let mut buffer = vec![0u8; 65_535];
    loop {
        let Ok((len, _)) = relay.socket.recv_from(&mut buffer).await else {
            continue;
        };
        let Some(id_bytes) = buffer[..len].first_chunk::<2>() else {
            continue;
        };
        let id = u16::from_be_bytes(*id_bytes);
        let waiting = relay
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        if let Some((client, original, _, in_flight)) = waiting {
            // No longer in flight before the client can see the answer (and send its next
            // query): counted after, the two would overlap in the peak.
            drop(in_flight);
            buffer[..2].copy_from_slice(&original.to_be_bytes());
            let _ = front.send_to(&buffer[..len], client).await;
        }
    }
}

async fn serve_udp(
    socket: Arc<UdpSocket>,
    upstream: Arc<Mutex<SocketAddr>>,
    state: Arc<State>,
    relay: Arc<Relay>,
) {
    let mut buffer = vec![0u8; 65_535];
    loop {
        let Ok((len, client)) = socket.recv_from(&mut buffer).await else {
            continue;
        };
        let mut message = buffer[..len].to_vec();
        let socket = Arc::clone(&socket);
        let state = Arc::clone(&state);
        let relay = Arc::clone(&relay);
        let server = *upstream.lock().unwrap_or_else(|p| p.into_inner());
        tokio::spawn(async move {
            let in_flight = InFlight::enter(&state);
            match act(&state, &message, Transport::Udp).await {
                Action::Drop => {}
                Action::Reply(bytes) => {
                    let _ = socket.send_to(&bytes, client).await;
                }
                Action::Forward => {
                    relay.forward(server, client, &mut message, in_flight).await;
                }
            }
        });
    }
}

async fn serve_tcp(listener: TcpListener, upstream: Arc<Mutex<SocketAddr>>, state: Arc<State>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let server = *upstream.lock().unwrap_or_else(|p| p.into_inner());
        tokio::spawn(tcp_connection(stream, server, Arc::clone(&state)));
    }
}

/// One client connection: each framed query handled on its own (answers may come out of order,
/// as RFC 7766 allows), each forwarded over a connection of its own.
async fn tcp_connection(stream: TcpStream, server: SocketAddr, state: Arc<State>) {
    let (mut reader, writer) = stream.into_split();
    let writer = Arc::new(tokio::sync::Mutex::new(writer));
    loop {
        let Ok(len) = reader.read_u16().await else {
            return;
        };
        let mut message = vec![0u8; usize::from(len)];
        if reader.read_exact(&mut message).await.is_err() {
            return;
        }
        let writer = Arc::clone(&writer);
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let _in_flight = InFlight::enter(&state);
            let answer = match act(&state, &message, Transport::Tcp).await {
                Action::Drop => return,
                Action::Reply(bytes) => bytes,
                Action::Forward => match forward_tcp(server, &message).await {
                    Some(bytes) => bytes,
                    None => return,
                },
            };
            let Ok(len) = u16::try_from(answer.len()) else {
                return;
            };
            let mut writer = writer.lock().await;
            let _ = writer.write_all(&len.to_be_bytes()).await;
            let _ = writer.write_all(&answer).await;
        });
    }
}

async fn forward_tcp(server: SocketAddr, message: &[u8]) -> Option<Vec<u8>> {
    let exchange = async {
        let mut stream = TcpStream::connect(server).await?;
        let len = u16::try_from(message.len()).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        stream.write_all(&len.to_be_bytes()).await?;
        stream.write_all(message).await?;
        let len = stream.read_u16().await?;
        let mut answer = vec![0u8; usize::from(len)];
        stream.read_exact(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    };
    tokio::time::timeout(UPSTREAM_TIMEOUT, exchange)
        .await
        .ok()?
        .ok()
}
