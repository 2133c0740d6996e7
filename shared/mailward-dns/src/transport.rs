//! One DNS question to one server: UDP with retransmission, TCP when the answer comes truncated.
//!
//! Why our own exchange instead of hickory-resolver's name-server pool (the adapter used it until
//! the real-DNS issue): the pool counts every NXDOMAIN and NODATA answer as a failure of the
//! server, adding 150 ms to its smoothed round-trip time each time, up to a 5 s cap, and resends
//! an unanswered UDP query only after 1.2 times that time. An audit asks for dozens of names that
//! do not exist (the DKIM selector catalogue), so after one audit every later query waited 6 s
//! before a resend: a single lost datagram cost the whole 2 s attempt. The in-process fixture
//! never loses a datagram, so it never showed; a real server behind a busy socket does.
//!
//! Here a query is resent on the same socket after [`Timing::retransmit`], then after twice that,
//! and so on until the attempt's timeout; the first valid answer wins. One socket per query, so
//! the in-flight bound is also the bound on the file descriptors DNS holds.
//!
//! An answer is accepted only from the server's address and port, with the query's ID and the
//! same question (name compared without case, type and class): anything else on the socket is
//! ignored, as an off-path spoofer's datagram would be.

use hickory_resolver::proto::op::{Edns, Message, MessageType, Query, ResponseCode};
use mailward_domain::dns::DnsError;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::time::{Instant, sleep_until, timeout_at};

/// How long one exchange may take and when it resends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// The whole exchange (UDP, resends, and the TCP retry of a truncated answer).
    pub(crate) timeout: Duration,
    /// The first resend of an unanswered UDP query; each later resend waits twice as long.
    pub(crate) retransmit: Duration,
    /// EDNS UDP payload size advertised.
    pub(crate) edns_payload_len: u16,
}

/// Largest UDP answer read; anything the server sends above the advertised payload is cut (and
/// then unreadable, so ignored), as a truncated answer should have been sent instead.
const MIN_RECEIVE: usize = 4096;

/// Asks `server` one question and returns its answer (whatever the response code), or why none
/// came.
pub(crate) async fn exchange(
    server: SocketAddr,
    query: &Query,
    timing: Timing,
) -> Result<Message, DnsError> {
    let deadline = Instant::now() + timing.timeout;
    let request = request(query, timing.edns_payload_len);
    let bytes = request
        .to_vec()
        .map_err(|e| DnsError::Other(format!("encoding the query: {e}")))?;
    let answer = udp(server, &request, &bytes, timing, deadline).await?;
    if !answer.metadata.truncation {
        return Ok(answer);
    }
    tcp(server, &request, &bytes, deadline).await
}

fn request(query: &Query, payload: u16) -> Message {
    let mut message = Message::query();
    message.metadata.recursion_desired = true;
    message.queries.push(query.clone());
    let mut edns = Edns::new();
    edns.set_max_payload(payload.max(512));
    message.edns = Some(edns);
    message
}

async fn udp(
    server: SocketAddr,
    request: &Message,
    bytes: &[u8],
    timing: Timing,
    deadline: Instant,
) -> Result<Message, DnsError> {
    let local: SocketAddr = if server.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    // Port 0: the kernel picks a random ephemeral port (Linux randomises UDP source ports).
    let socket = UdpSocket::bind(local).await.map_err(io_error)?;
    socket.send_to(bytes, server).await.map_err(io_error)?;
    let mut interval = timing.retransmit.max(Duration::from_millis(10));
    let mut resend = Instant::now() + interval;
    let mut buffer = vec![0u8; usize::from(timing.edns_payload_len).max(MIN_RECEIVE)];
    loop {
        tokio::select! {
            received = socket.recv_from(&mut buffer) => {
                let (len, from) = received.map_err(io_error)?;
                if let Some(answer) = accept(server, from, request, &buffer[..len]) {
                    return Ok(answer);
                }
            }
            () = sleep_until(resend), if resend < deadline => {
                socket.send_to(bytes, server).await.map_err(io_error)?;
                interval = interval.saturating_mul(2);
                resend += interval;
            }
            () = sleep_until(deadline) => return Err(DnsError::Timeout),
        }
    }
}

async fn tcp(
    server: SocketAddr,
    request: &Message,
    bytes: &[u8],
    deadline: Instant,
) -> Result<Message, DnsError> {
    let exchange = async {
        let mut stream = TcpStream::connect(server).await?;
        let len = u16::try_from(bytes.len()).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        let mut framed = Vec::with_capacity(bytes.len() + 2);
        framed.extend_from_slice(&len.to_be_bytes());
        framed.extend_from_slice(bytes);
        stream.write_all(&framed).await?;
        loop {
            let len = stream.read_u16().await?;
            let mut buffer = vec![0u8; usize::from(len)];
            stream.read_exact(&mut buffer).await?;
            if let Some(answer) = accept(server, server, request, &buffer) {
                return Ok(answer);
            }
        }
    };
    match timeout_at(deadline, exchange).await {
        Err(_) => Err(DnsError::Timeout),
        Ok(Err(e)) => Err(io_error(e)),
        Ok(Ok(answer)) => Ok(answer),
    }
}

/// The answer in `datagram`, when it is the server's answer to `request`.
fn accept(
    server: SocketAddr,
    from: SocketAddr,
    request: &Message,
    datagram: &[u8],
) -> Option<Message> {
    if from.ip().to_canonical() != server.ip().to_canonical() || from.port() != server.port() {
        return None;
    }
    let id = datagram
        .first_chunk::<2>()
        .map(|b| u16::from_be_bytes(*b))?;
    if id != request.metadata.id {
        return None;
    }
    let answer = Message::from_vec(datagram).ok()?;
    let same_question = answer.metadata.message_type == MessageType::Response
        && answer.queries.len() == request.queries.len()
        && answer.queries.iter().zip(&request.queries).all(|(a, q)| {
            a.query_type == q.query_type && a.query_class == q.query_class && a.name == q.name
        });
    // A server that cannot parse the question (FORMERR) may send it back without one.
    let formerr =
        answer.metadata.response_code == ResponseCode::FormErr && answer.queries.is_empty();
    (same_question || formerr).then_some(answer)
}

fn io_error(error: std::io::Error) -> DnsError {
    if error.kind() == std::io::ErrorKind::TimedOut {
        DnsError::Timeout
    } else {
        DnsError::Other(format!("network: {error}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_resolver::proto::rr::{Name, RecordType};

    fn question() -> Query {
        Query::query(Name::from_ascii("Example.test.").unwrap(), RecordType::TXT)
    }

    fn answer_to(request: &Message) -> Message {
        let mut answer = request.clone();
        answer.metadata.message_type = MessageType::Response;
        answer
    }

    #[test]
    fn only_the_servers_answer_to_the_question_is_accepted() {
        let server: SocketAddr = "127.0.0.1:5300".parse().unwrap();
        let request = request(&question(), 1232);
        let good = answer_to(&request).to_vec().unwrap();
        assert!(accept(server, server, &request, &good).is_some());
        // Case differences in the echoed name are fine (RFC 4343).
        let mut upper = answer_to(&request);
        upper.queries[0].name = Name::from_ascii("EXAMPLE.TEST.").unwrap();
        assert!(accept(server, server, &request, &upper.to_vec().unwrap()).is_some());
        // Another port, another address, another ID, another question, a query: ignored.
        let other_port: SocketAddr = "127.0.0.1:5301".parse().unwrap();
        assert!(accept(server, other_port, &request, &good).is_none());
        let other_ip: SocketAddr = "127.0.0.2:5300".parse().unwrap();
        assert!(accept(server, other_ip, &request, &good).is_none());
        let mut wrong_id = answer_to(&request);
        wrong_id.metadata.id = request.metadata.id.wrapping_add(1);
        assert!(accept(server, server, &request, &wrong_id.to_vec().unwrap()).is_none());
        let mut wrong_name = answer_to(&request);
        wrong_name.queries[0].name = Name::from_ascii("other.test.").unwrap();
        assert!(accept(server, server, &request, &wrong_name.to_vec().unwrap()).is_none());
        assert!(accept(server, server, &request, &request.to_vec().unwrap()).is_none());
        assert!(accept(server, server, &request, &[0x12]).is_none());
        assert!(accept(server, server, &request, &good[..good.len() - 3]).is_none());
    }

    #[tokio::test]
    async fn a_lost_datagram_is_resent_on_the_same_socket() {
        // A server that ignores the first copy of every query and answers the second.
        let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = server.local_addr().unwrap();
        let serve = tokio::spawn(async move {
            let mut buffer = [0u8; 1500];
            let (_, first_from) = server.recv_from(&mut buffer).await.unwrap();
            let (len, from) = server.recv_from(&mut buffer).await.unwrap();
            assert_eq!(from, first_from, "resent from the same socket");
            let mut answer = Message::from_vec(&buffer[..len]).unwrap();
            answer.metadata.message_type = MessageType::Response;
            answer.metadata.response_code = ResponseCode::NXDomain;
            server
                .send_to(&answer.to_vec().unwrap(), from)
                .await
                .unwrap();
        });
        let timing = Timing {
            timeout: Duration::from_secs(60),
            retransmit: Duration::from_millis(50),
            edns_payload_len: 1232,
        };
        let started = Instant::now();
        let answer = exchange(addr, &question(), timing).await.unwrap();
        assert_eq!(answer.metadata.response_code, ResponseCode::NXDomain);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "resent, not timed out"
        );
        serve.await.unwrap();
    }

    #[tokio::test]
    async fn silence_is_a_timeout() {
        let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let timing = Timing {
            timeout: Duration::from_millis(200),
            retransmit: Duration::from_millis(50),
            edns_payload_len: 1232,
        };
        let outcome = exchange(server.local_addr().unwrap(), &question(), timing).await;
        assert_eq!(outcome.unwrap_err(), DnsError::Timeout);
        // The original and the resends at 50, 150 ms reached the server.
        let mut buffer = [0u8; 1500];
        let mut copies = 0;
        while let Ok(Ok(_)) =
            tokio::time::timeout(Duration::from_millis(10), server.recv_from(&mut buffer)).await
        {
            copies += 1;
        }
        assert_eq!(copies, 3);
    }
}
