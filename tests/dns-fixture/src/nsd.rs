//! A real authoritative server for the fixture's zones: NSD (Debian's `nsd`), run as a child
//! process on a loopback port with its own configuration, zone files and state in a temporary
//! directory.
//!
//! Why NSD: it is what customers' zones are served by in the wild (with BIND, Knot, PowerDNS and
//! the big providers), it answers strictly as an authoritative server (AA, no RA, NXDOMAIN and
//! NODATA with the zone's SOA, CNAMEs left for the resolver to follow out of zone), it starts in
//! about 80 ms and reloads a zone in about 50 ms, and it runs without a daemon user or database.
//!
//! Edits rewrite the changed zone files with a new SOA serial, send SIGHUP, and wait until the
//! server answers with that serial, so a test's next query sees the edit. Adding or removing a
//! zone (which NSD only learns from its configuration) restarts it on a new port.

use crate::FixtureError;
use crate::zone::Zone;
use hickory_server::proto::op::{Message, MessageType};
use hickory_server::proto::rr::{Name, RData, RecordType};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long NSD may take to start or to serve a reloaded zone.
const READY_WITHIN: Duration = Duration::from_secs(15);

/// Where the server binary is: `MAILWARD_NSD`, else Debian's path.
pub fn nsd_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MAILWARD_NSD") {
        return Some(PathBuf::from(path)).filter(|p| p.exists());
    }
    ["/usr/sbin/nsd", "/usr/local/sbin/nsd"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// One running NSD and the files it serves.
pub(crate) struct Nsd {
    dir: tempfile::TempDir,
    ip: IpAddr,
    child: Child,
    addr: SocketAddr,
    serial: u32,
    /// Origin (canonical) → (file name, the zone file as last written without its serial).
    files: BTreeMap<String, (String, String)>,
}

impl Nsd {
    /// Starts NSD on `ip` (a free port) serving `zones`.
    pub(crate) fn start(ip: IpAddr, zones: &[Zone]) -> Result<Self, FixtureError> {
        let dir = tempfile::Builder::new().prefix("mailward-nsd-").tempdir()?;
        let (child, addr, files) = launch(dir.path(), ip, zones, 1)?;
        Ok(Self {
            dir,
            ip,
            child,
            addr,
            serial: 1,
            files,
        })
    }

    /// The address NSD answers on (UDP and TCP).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `zones` from now on; returns once NSD answers with every changed zone.
    pub(crate) fn apply(&mut self, zones: &[Zone]) -> Result<(), FixtureError> {
        self.serial = self.serial.wrapping_add(1).max(2);
        let serial = self.serial;
        let same_zones = zones.len() == self.files.len()
            && zones.iter().all(|z| self.files.contains_key(&z.origin()));
        if !same_zones {
            stop(&mut self.child);
            let (child, addr, files) = launch(self.dir.path(), self.ip, zones, serial)?;
            self.child = child;
            self.addr = addr;
            self.files = files;
            return Ok(());
        }
        let mut changed = Vec::new();
        for zone in zones {
            let origin = zone.origin();
            let text = zone.zone_file(0)?;
            let Some((file, written)) = self.files.get_mut(&origin) else {
                continue;
            };
            if *written == text {
                continue;
            }
            std::fs::write(self.dir.path().join(&*file), zone.zone_file(serial)?)?;
            *written = text;
            changed.push(zone.origin_name().clone());
        }
        if changed.is_empty() {
            return Ok(());
        }
        signal(&self.child, "HUP");
        let deadline = Instant::now() + READY_WITHIN;
        for origin in &changed {
            wait_for_serial(
                self.addr,
                origin,
                Some(serial),
                deadline,
                &mut self.child,
                self.dir.path(),
            )?;
        }
        Ok(())
    }
}

impl Drop for Nsd {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// SIGTERM (NSD then stops its server and transfer processes too), and wait.
fn stop(child: &mut Child) {
    signal(child, "TERM");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Sends a signal (`HUP`, `TERM`) with kill(1): the workspace forbids `unsafe`.
fn signal(child: &Child, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

type Launched = (Child, SocketAddr, BTreeMap<String, (String, String)>);

/// Writes the configuration and zone files and starts NSD, retrying on another port when the one
/// picked was taken meanwhile.
fn launch(dir: &Path, ip: IpAddr, zones: &[Zone], serial: u32) -> Result<Launched, FixtureError> {
    let binary = nsd_binary().ok_or_else(|| {
        FixtureError::Invalid("nsd is not installed (apt-get install nsd)".into())
    })?;
    let mut files = BTreeMap::new();
    let mut zone_entries = String::new();
    for (i, zone) in zones.iter().enumerate() {
        let file = format!("zone{i}.zone");
        std::fs::write(dir.join(&file), zone.zone_file(serial)?)?;
        zone_entries.push_str(&format!(
            "zone:\n  name: \"{}\"\n  zonefile: \"{file}\"\n",
            crate::zonefile::name(zone.origin_name())
        ));
        files.insert(zone.origin(), (file, zone.zone_file(0)?));
    }
    let mut last_error = None;
    for _ in 0..5 {
        let port = free_port(ip)?;
        let addr = SocketAddr::new(ip, port);
        let conf = dir.join("nsd.conf");
        std::fs::write(&conf, config(dir, addr, &zone_entries))?;
        let _ = std::fs::remove_file(dir.join("nsd.log"));
        let mut child = Command::new(&binary)
            .arg("-d")
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let deadline = Instant::now() + READY_WITHIN;
        // With no zone at all, any answer (REFUSED) says it is up.
        let probe = zones.first().map(|z| z.origin_name().clone());
        let ready = match &probe {
            Some(origin) => wait_for_serial(addr, origin, Some(serial), deadline, &mut child, dir),
            None => wait_for_serial(addr, &Name::root(), None, deadline, &mut child, dir),
        };
        match ready {
            Ok(()) => return Ok((child, addr, files)),
            Err(e) => {
                stop(&mut child);
                last_error = Some(e);
            }
        }
    }
    Err(last_error.unwrap_or_else(|| FixtureError::Invalid("nsd did not start".into())))
}

fn config(dir: &Path, addr: SocketAddr, zones: &str) -> String {
    let d = dir.display();
    format!(
        "server:\n  ip-address: {ip}@{port}\n  port: {port}\n  zonesdir: \"{d}\"\n  \
         username: \"\"\n  chroot: \"\"\n  database: \"\"\n  pidfile: \"{d}/nsd.pid\"\n  \
         zonelistfile: \"{d}/zone.list\"\n  xfrdfile: \"{d}/xfrd.state\"\n  \
         xfrdir: \"{d}\"\n  cookie-secret-file: \"{d}/cookie.secret\"\n  \
         logfile: \"{d}/nsd.log\"\n  verbosity: 1\n  server-count: 1\n  \
         xfrd-reload-timeout: 0\n  hide-version: yes\n  \
         remote-control:\n  control-enable: no\n{zones}",
        ip = addr.ip(),
        port = addr.port(),
    )
    .replace("  remote-control:", "remote-control:")
}

/// A port free for both UDP and TCP on `ip` right now.
fn free_port(ip: IpAddr) -> Result<u16, FixtureError> {
    for _ in 0..20 {
        let udp = UdpSocket::bind((ip, 0))?;
        let port = udp.local_addr()?.port();
        if TcpListener::bind((ip, port)).is_ok() {
            return Ok(port);
        }
    }
    Err(FixtureError::Invalid("no free port".into()))
}

/// Answers in a row with the awaited serial before a reload counts as done: during a reload
/// NSD's old server process may still answer a few queries from the old zone while the new
/// one answers from the new (both read the same socket), so one answer is not enough.
const SERIAL_STREAK: u32 = 5;

/// Waits until `addr` answers the SOA of `origin` with `serial` (NSD loaded that version,
/// [`SERIAL_STREAK`] times in a row), or answers at all when no serial is awaited.
fn wait_for_serial(
    addr: SocketAddr,
    origin: &Name,
    serial: Option<u32>,
    deadline: Instant,
    child: &mut Child,
    dir: &Path,
) -> Result<(), FixtureError> {
    let socket = UdpSocket::bind((addr.ip(), 0))?;
    socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut query = Message::query();
    query.queries.push(hickory_server::proto::op::Query::query(
        origin.clone(),
        RecordType::SOA,
    ));
    let bytes = query
        .to_vec()
        .map_err(|e| FixtureError::Invalid(e.to_string()))?;
    let mut buffer = [0u8; 4096];
    let mut streak = 0;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(dir.join("nsd.log")).unwrap_or_default();
            return Err(FixtureError::Invalid(format!(
                "nsd exited ({status}): {}",
                log.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
            )));
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("nsd.log")).unwrap_or_default();
            return Err(FixtureError::Invalid(format!(
                "nsd did not serve {origin} serial {serial:?} in time: {}",
                log.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
            )));
        }
        let _ = socket.send_to(&bytes, addr);
        let answer = match socket.recv_from(&mut buffer) {
            Ok((len, _)) => Message::from_vec(&buffer[..len]).ok().filter(|m| {
                m.metadata.message_type == MessageType::Response
                    && m.metadata.id == query.metadata.id
            }),
            Err(_) => None,
        };
        if let Some(answer) = answer {
            let served = answer.answers.iter().find_map(|r| match &r.data {
                RData::SOA(soa) => Some(soa.serial),
                _ => None,
            });
            if serial.is_none() {
                return Ok(());
            }
            if served == serial {
                streak += 1;
                if streak >= SERIAL_STREAK {
                    return Ok(());
                }
                continue;
            }
            streak = 0;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
