//! `mailward-bench ingest` and `ingest-big`: DMARC aggregate report ingestion.
//!
//! The corpus is generated from the records of the aggregate fixtures of `mailward-reports`
//! (each `<record>` is a template; its source IP, count and header-from vary), as reports of
//! 50,000 records, one UTC day each, every fifth one gzip-compressed. Every file then goes
//! through `mailward_workers::ingest::ingest` on the local stack's embedded adapters
//! (SQLite in a temporary data directory) for a domain an organization watches, so every report
//! is parsed, folded into per-day rows and stored. CPU time comes from `getrusage` (user + sys,
//! every thread of the process); peak memory is the RSS high-water mark, reset after the corpus
//! is written. The same files are then parsed by parsedmarc (offline: no DNS, no downloads) in a
//! Python venv, for the ratio.

use anyhow::Context as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Records per generated report.
const RECORDS_PER_REPORT: usize = 50_000;
/// The domain the reports are about (watched by the bench organization).
const DOMAIN: &str = "bench-reports.example";
/// The parsedmarc release measured (the newest that installs here).
pub const PARSEDMARC_VERSION: &str = "11.1.0";

/// Options of `mailward-bench ingest`.
pub struct Options {
    pub records: usize,
    pub dir: Option<PathBuf>,
    pub concurrency: usize,
    pub parsedmarc: bool,
    /// Times the Mailward side is measured (each on a fresh local stack); the median counts.
    pub runs: usize,
    /// The IP data's cache directory: also measure the sender enrichment of the corpus's
    /// distinct addresses (who owns each network), reported beside the ingest figure.
    pub enrichment: Option<PathBuf>,
}

/// The CPU time of enriching every distinct source address of the corpus (`records` of them:
/// each record has its own address), with the IP data loaded once (not counted: a process
/// loads it once for all its imports).
pub async fn enrichment_cpu(records: usize, cache: &Path) -> anyhow::Result<(Duration, usize)> {
    let files = mailward_local_stack::ipdata::fetch(cache).await?;
    let data = mailward_ipdata::IpData::new(files.mmdb, Some(&files.map))?;
    let cpu = cpu_time();
    let owners = data.owners((0..records as u64).map(source_ip));
    let known = owners
        .iter()
        .filter(|o| o.as_ref().is_some_and(|o| o.asn.is_some()))
        .count();
    Ok((cpu_time() - cpu, known))
}

/// One slot of a record template.
enum Part {
    Text(String),
    SourceIp,
    Count,
    HeaderFrom,
}

/// A fixture's `<record>` with its varying fields cut out.
struct Template(Vec<Part>);

impl Template {
    /// Cuts `<source_ip>`, `<count>` and `<header_from>` out of a record; `None` when the record
    /// has no source IP or count to vary.
    fn of(block: &str) -> Option<Self> {
        let mut cuts = Vec::new();
        for (name, part) in [
            ("source_ip", Part::SourceIp),
            ("count", Part::Count),
            ("header_from", Part::HeaderFrom),
        ] {
            let open = format!("<{name}>");
            let close = format!("</{name}>");
            match block.find(&open) {
                Some(start) => {
                    let inner = start + open.len();
                    let end = inner + block[inner..].find(&close)?;
                    cuts.push((inner, end, part));
                }
                None if matches!(part, Part::HeaderFrom) => {}
                None => return None,
            }
        }
        cuts.sort_by_key(|c| c.0);
        let mut parts = Vec::new();
        let mut at = 0;
        for (start, end, part) in cuts {
            parts.push(Part::Text(block[at..start].to_owned()));
            parts.push(part);
            at = end;
        }
        parts.push(Part::Text(block[at..].to_owned()));
        Some(Self(parts))
    }

    fn write(&self, out: &mut dyn std::io::Write, g: u64) -> std::io::Result<()> {
        for part in &self.0 {
            match part {
                Part::Text(t) => out.write_all(t.as_bytes())?,
                Part::SourceIp => write!(out, "{}", source_ip(g))?,
                Part::Count => write!(out, "{}", 1 + (g * 31) % 97)?,
                Part::HeaderFrom => out.write_all(DOMAIN.as_bytes())?,
            }
        }
        Ok(())
    }
}

/// A distinct, public-looking source address per record: IPv4 in 45.0.0.0/8 (an odd
/// multiplier is a bijection modulo 2^24), every eighth one IPv6.
fn source_ip(g: u64) -> std::net::IpAddr {
    if g % 8 == 7 {
        std::net::Ipv6Addr::from(0x2001_0db8_0000_0000_0000_0000_0000_0000u128 + u128::from(g))
            .into()
    } else {
        let low = (g.wrapping_mul(2_654_435_761) & 0x00ff_ffff) as u32;
        std::net::Ipv4Addr::from(0x2d00_0000 | low).into()
    }
}

/// The fixtures' aggregate reports.
pub fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/mailward-reports/tests/fixtures/dmarc-aggregate")
}

/// Every usable `<record>` of the fixtures' plain XML reports, as templates.
fn templates() -> anyhow::Result<Vec<Template>> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(fixture_root()).context("reading the fixtures")? {
        let dir = dir?.path();
        if dir.is_dir() {
            for file in std::fs::read_dir(&dir)? {
                let file = file?.path();
                if file.extension().is_some_and(|e| e == "xml") {
                    files.push(file);
                }
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        let mut rest = text.as_str();
        while let Some(start) = rest.find("<record>") {
            let Some(len) = rest[start..].find("</record>") else {
                break;
            };
            let end = start + len + "</record>".len();
            out.extend(Template::of(&rest[start..end]));
            rest = &rest[end..];
        }
    }
    anyhow::ensure!(!out.is_empty(), "no record templates in the fixtures");
    Ok(out)
}

/// Writes one report of `count` records (global indexes from `first`) covering one UTC day.
fn write_report(
    out: &mut dyn std::io::Write,
    templates: &[Template],
    report: usize,
    day_start: i64,
    first: u64,
    count: usize,
) -> std::io::Result<()> {
    write!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<feedback>\n  <report_metadata>\n    \
         <org_name>bench-reporter-{r}.example</org_name>\n    \
         <email>noreply-dmarc@bench-reporter-{r}.example</email>\n    \
         <report_id>bench-{report}-{first}</report_id>\n    <date_range>\n      \
         <begin>{day_start}</begin>\n      <end>{end}</end>\n    </date_range>\n  \
         </report_metadata>\n  <policy_published>\n    <domain>{DOMAIN}</domain>\n    \
         <adkim>r</adkim>\n    <aspf>r</aspf>\n    <p>none</p>\n    <sp>none</sp>\n    \
         <pct>100</pct>\n  </policy_published>\n",
        r = report % 3,
        end = day_start + 86_399,
    )?;
    for i in 0..count as u64 {
        let g = first + i;
        out.write_all(b"  ")?;
        templates[(g % templates.len() as u64) as usize].write(out, g)?;
        out.write_all(b"\n")?;
    }
    out.write_all(b"</feedback>\n")
}

/// One generated report file.
pub struct CorpusFile {
    pub path: PathBuf,
    pub records: usize,
}

/// Writes `records` records into `dir` as reports of [`RECORDS_PER_REPORT`], one per day
/// back from yesterday; every fifth report gzip-compressed.
pub fn write_corpus(
    dir: &Path,
    records: usize,
    per_report: usize,
) -> anyhow::Result<Vec<CorpusFile>> {
    std::fs::create_dir_all(dir)?;
    let templates = templates()?;
    let today = time::OffsetDateTime::now_utc()
        .date()
        .midnight()
        .assume_utc()
        .unix_timestamp();
    let mut files = Vec::new();
    let mut written = 0;
    let mut report = 0;
    while written < records {
        let count = per_report.min(records - written);
        let day_start = today - 86_400 * (report as i64 + 1);
        let gzip = report % 5 == 4;
        let path = dir.join(format!(
            "report-{report:03}.xml{}",
            if gzip { ".gz" } else { "" }
        ));
        let file = std::io::BufWriter::new(std::fs::File::create(&path)?);
        let write = |out: &mut dyn std::io::Write| {
            write_report(out, &templates, report, day_start, written as u64, count)
        };
        if gzip {
            let mut enc = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            write(&mut enc)?;
            enc.finish()?.flush()?;
        } else {
            let mut file = file;
            write(&mut file)?;
            file.flush()?;
        }
        files.push(CorpusFile {
            path,
            records: count,
        });
        written += count;
        report += 1;
    }
    Ok(files)
}

/// CPU time of the whole process (user + system, every thread), from `getrusage`.
pub(crate) fn cpu_time() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(Duration::ZERO, |u| {
        let t = |tv: nix::sys::time::TimeVal| {
            Duration::new(tv.tv_sec() as u64, tv.tv_usec() as u32 * 1000)
        };
        t(u.user_time()) + t(u.system_time())
    })
}

/// Resets the RSS high-water mark to the current RSS (Linux `clear_refs` 5), so the peak
/// measured is that of ingestion, not of writing the corpus.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Current RSS in MiB.
fn rss_mib() -> f64 {
    super::status_kib("VmRSS:") / 1024.0
}

/// The local stack's state on a fresh data directory, with an organization watching
/// [`DOMAIN`], and the delivery of reports to it (an import for that organization, as
/// `mailward import --org` does).
async fn watched_state(
    data_dir: &Path,
) -> anyhow::Result<(
    mailward_services::state::AppState,
    mailward_workers::ingest::Delivery,
    uuid::Uuid,
)> {
    let settings = mailward_local_stack::Settings::new(data_dir.to_path_buf());
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = mailward_local_stack::assemble(&settings, clock, settings.listen)?;
    let state = assembled.state;
    let now = time::OffsetDateTime::now_utc();
    let org = mailward_domain::model::Organization {
        id: uuid::Uuid::new_v4(),
        name: "Bench Reports Org".into(),
        is_active: true,
        state: mailward_domain::model::OrgState::Active,
        pricing_type: mailward_domain::model::PricingType::ItTeams,
        referer: None,
        attribution_id: None,
        logo_url: None,
        email: Some("bench@bench-reports.example".into()),
        phone_number: None,
        website: None,
        require_mfa: false,
        email_notifications: Default::default(),
        agent_proposals_enabled: true,
        redact_failure_reports: true,
        onboarding_dismissed_at: None,
        created_by: None,
        parent_org_id: None,
        invitation_failure: None,
        suspension: None,
        created_at: now,
        updated_at: now,
    };
    let domain =
        mailward_domain::domain::Domain::new(uuid::Uuid::new_v4(), org.id, DOMAIN.into(), now);
    let mut ops = mailward_store::orgs::create_ops(&org)?;
    ops.extend(mailward_store::domains::create_ops(&domain)?);
    state.store.transact(ops).await?;
    Ok((
        state,
        mailward_workers::ingest::Delivery::import_for(org.id),
        org.id,
    ))
}

/// What ingesting a set of files cost.
struct Measured {
    records: u64,
    messages: u64,
    wall: Duration,
    cpu: Duration,
    peak_rss_mib: f64,
    rss_before_mib: f64,
}

/// Ingests every file (`concurrency` at a time), checking each report imported.
async fn ingest_files(
    state: &mailward_services::state::AppState,
    delivery: &mailward_workers::ingest::Delivery,
    files: &[CorpusFile],
    concurrency: usize,
) -> anyhow::Result<Measured> {
    use futures::StreamExt as _;
    use mailward_workers::ingest::{Status, ingest_shared, read_reusing};
    // Buffers are reused from file to file, as `mailward import` does.
    let buffers = Arc::new(std::sync::Mutex::new(Vec::<Vec<u8>>::new()));
    reset_peak_rss();
    let rss_before_mib = rss_mib();
    let (wall, cpu) = (Instant::now(), cpu_time());
    let results: Vec<anyhow::Result<(u64, u64)>> =
        futures::stream::iter(files.iter().map(|file| {
            let (state, buffers, delivery) = (state.clone(), buffers.clone(), delivery.clone());
            let (path, expected) = (file.path.clone(), file.records as u64);
            async move {
                tokio::spawn(async move {
                    let taken = buffers.lock().ok().and_then(|mut b| b.pop());
                    let mut buffer = taken.unwrap_or_default();
                    let mut file = std::fs::File::open(&path)?;
                    let size = file.metadata()?.len();
                    read_reusing(&mut buffer, &mut file, size)?;
                    let bytes = bytes::Bytes::from(buffer);
                    let outcomes = ingest_shared(
                        &state,
                        bytes.clone(),
                        &delivery,
                        &mailward_reports::Limits::default(),
                    )
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                    if let (Ok(buffer), Ok(mut pool)) = (bytes.try_into_mut(), buffers.lock()) {
                        pool.push(buffer.into());
                    }
                    let [outcome] = outcomes.as_slice() else {
                        anyhow::bail!("{}: {outcomes:?}", path.display());
                    };
                    anyhow::ensure!(
                        outcome.status == Status::Imported && outcome.records == expected,
                        "{}: {outcome:?}",
                        path.display()
                    );
                    Ok((outcome.records, outcome.messages))
                })
                .await?
            }
        }))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let (wall, cpu) = (wall.elapsed(), cpu_time() - cpu);
    let mut measured = Measured {
        records: 0,
        messages: 0,
        wall,
        cpu,
        peak_rss_mib: super::peak_rss_mib(),
        rss_before_mib,
    };
    for r in results {
        let (records, messages) = r?;
        measured.records += records;
        measured.messages += messages;
    }
    Ok(measured)
}

/// parsedmarc's figures over the same files.
struct Parsedmarc {
    records: u64,
    seconds: f64,
    cpu_seconds: f64,
}

/// A venv with parsedmarc, made once under the build directory and reused.
fn parsedmarc_python() -> Result<PathBuf, String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let venv = target.join("parsedmarc-venv");
    let python = venv.join("bin/python");
    let installed = || {
        std::process::Command::new(&python)
            .args([
                "-c",
                "import parsedmarc, sys; print(parsedmarc.__version__)",
            ])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .is_some_and(|o| String::from_utf8_lossy(&o.stdout).trim() == PARSEDMARC_VERSION)
    };
    if installed() {
        return Ok(python);
    }
    eprintln!(
        "installing parsedmarc=={PARSEDMARC_VERSION} into {}",
        venv.display()
    );
    let run = |cmd: &mut std::process::Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            Err(err.lines().rev().take(5).collect::<Vec<_>>().join(" | "))
        }
    };
    run(std::process::Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv))?;
    run(std::process::Command::new(venv.join("bin/pip")).args([
        "install",
        "-q",
        &format!("parsedmarc=={PARSEDMARC_VERSION}"),
    ]))?;
    if installed() {
        Ok(python)
    } else {
        Err("parsedmarc does not import after installation".into())
    }
}

/// Times parsedmarc's aggregate parser over the files: no DNS (`offline`), bundled data files
/// only (`always_use_local_files`); IP country from its bundled database.
const PARSEDMARC_SCRIPT: &str = r#"
import json, sys, time
import parsedmarc
records = 0
wall = 0.0
cpu = 0.0
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        data = f.read()
    w, c = time.perf_counter(), time.process_time()
    report = parsedmarc.parse_aggregate_report_file(data, offline=True, always_use_local_files=True)
    wall += time.perf_counter() - w
    cpu += time.process_time() - c
    records += len(report["records"])
print(json.dumps({"records": records, "seconds": wall, "cpu_seconds": cpu}))
"#;

fn run_parsedmarc(files: &[CorpusFile]) -> Result<Parsedmarc, String> {
    let python = parsedmarc_python()?;
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(PARSEDMARC_SCRIPT)
        .args(files.iter().map(|f| &f.path))
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().rev().take(5).collect::<Vec<_>>().join(" | "));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("parsedmarc output: {e}"))?;
    Ok(Parsedmarc {
        records: v["records"].as_u64().unwrap_or(0),
        seconds: v["seconds"].as_f64().unwrap_or(0.0),
        cpu_seconds: v["cpu_seconds"].as_f64().unwrap_or(0.0),
    })
}

/// The corpus directory: the one asked for, kept, or a temporary one.
fn corpus_dir(dir: Option<PathBuf>) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    Ok(match dir {
        Some(dir) => (dir, None),
        None => {
            let tmp = tempfile::tempdir()?;
            (tmp.path().join("corpus"), Some(tmp))
        }
    })
}

/// `mailward-bench ingest`.
pub async fn run(options: Options) -> anyhow::Result<()> {
    let (dir, _keep) = corpus_dir(options.dir.clone())?;
    let started = Instant::now();
    let files = write_corpus(&dir, options.records, RECORDS_PER_REPORT)?;
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(&f.path).map_or(0, |m| m.len()))
        .sum();
    let gzipped = files
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "gz"))
        .count();
    println!(
        "corpus: {} records in {} reports ({gzipped} gzip), {:.1} MiB on disk, in {} ({:.1} s)",
        options.records,
        files.len(),
        bytes as f64 / 1024.0 / 1024.0,
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    // The Mailward side runs in seconds and its CPU time moves by up to a tenth from run to
    // run on a VM (the kernel's zeroing of fresh memory, above all): it is measured several
    // times, each on a fresh local stack in this process, and the median run is the figure.
    let mut runs = Vec::new();
    for run in 1..=options.runs.max(1) {
        let data = tempfile::tempdir()?;
        let (state, delivery, _) = watched_state(data.path()).await?;
        let m = ingest_files(&state, &delivery, &files, options.concurrency).await?;
        eprintln!(
            "Mailward run {run}: {:.3} s CPU, {:.3} s wall, peak RSS {:.0} MiB",
            m.cpu.as_secs_f64(),
            m.wall.as_secs_f64(),
            m.peak_rss_mib
        );
        runs.push(m);
    }
    let all_runs: Vec<serde_json::Value> = runs
        .iter()
        .map(|m| {
            serde_json::json!({
                "cpu_seconds": m.cpu.as_secs_f64(),
                "wall_seconds": m.wall.as_secs_f64(),
                "peak_rss_mib": m.peak_rss_mib,
            })
        })
        .collect();
    let peak_rss_mib = runs.iter().map(|m| m.peak_rss_mib).fold(0.0, f64::max);
    runs.sort_by_key(|m| m.cpu);
    let mut m = runs.swap_remove(runs.len() / 2);
    // The highest peak of any run, not the median's.
    m.peak_rss_mib = peak_rss_mib;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rate = m.records as f64 / m.wall.as_secs_f64();
    let per_core = m.records as f64 / m.cpu.as_secs_f64().max(1e-9);

    let parsedmarc = if options.parsedmarc {
        eprintln!("parsedmarc {PARSEDMARC_VERSION}: parsing the same files ...");
        Some(run_parsedmarc(&files))
    } else {
        None
    };
    println!();
    println!(
        "{:<44} {:>14} {:>16} {:>10}",
        "", "records/s", "records/s/core", "peak RSS"
    );
    println!(
        "{:<44} {:>14.0} {:>16.0} {:>6.0} MiB",
        format!(
            "Mailward ingest ({} at a time, {cores} cores)",
            options.concurrency
        ),
        rate,
        per_core,
        m.peak_rss_mib
    );
    let mut json = serde_json::json!({
        "bench": "ingest",
        "records": m.records,
        "messages": m.messages,
        "reports": files.len(),
        "corpus_bytes": bytes,
        "cores": cores,
        "concurrency": options.concurrency,
        "mailward": {
            "wall_seconds": m.wall.as_secs_f64(),
            "cpu_seconds": m.cpu.as_secs_f64(),
            "records_per_second": rate,
            "records_per_cpu_second": per_core,
            "peak_rss_mib": m.peak_rss_mib,
            "rss_before_mib": m.rss_before_mib,
            "runs": all_runs,
        },
    });
    match parsedmarc {
        Some(Ok(p)) => {
            let p_rate = p.records as f64 / p.seconds.max(1e-9);
            let p_core = p.records as f64 / p.cpu_seconds.max(1e-9);
            println!(
                "{:<44} {:>14.0} {:>16.0} {:>10}",
                format!("parsedmarc {PARSEDMARC_VERSION} parse only (1 process)"),
                p_rate,
                p_core,
                "-"
            );
            println!();
            println!(
                "Mailward per core / parsedmarc per core: {:.0}x (target >= 100x); wall: {:.0}x",
                per_core / p_core,
                rate / p_rate
            );
            json["parsedmarc"] = serde_json::json!({
                "version": PARSEDMARC_VERSION,
                "records": p.records,
                "seconds": p.seconds,
                "cpu_seconds": p.cpu_seconds,
                "records_per_second": p_rate,
                "records_per_cpu_second": p_core,
            });
            json["ratio_per_core"] = (per_core / p_core).into();
            json["ratio_wall"] = (rate / p_rate).into();
        }
        Some(Err(why)) => {
            println!();
            println!("parsedmarc {PARSEDMARC_VERSION}: NOT MEASURED ({why})");
            json["parsedmarc"] = serde_json::json!({"error": why});
        }
        None => {}
    }
    println!(
        "Mailward: {} records ({} messages) in {:.2} s wall, {:.2} s CPU (user+sys)",
        m.records,
        m.messages,
        m.wall.as_secs_f64(),
        m.cpu.as_secs_f64()
    );
    if let Some(cache) = &options.enrichment {
        let (cpu, known) = enrichment_cpu(options.records, cache).await?;
        let with = m.records as f64 / (m.cpu + cpu).as_secs_f64().max(1e-9);
        let drop = 100.0 * (1.0 - with / per_core);
        println!(
            "Enrichment on: {} distinct addresses ({known} with an AS) in {:.3} s CPU; ingest with enrichment {:.0} records per CPU second, {drop:.1}% below enrichment off ({per_core:.0})",
            options.records,
            cpu.as_secs_f64(),
            with
        );
        json["enrichment"] = serde_json::json!({
            "addresses": options.records,
            "with_as": known,
            "cpu_seconds": cpu.as_secs_f64(),
            "records_per_cpu_second_on": with,
            "records_per_cpu_second_off": per_core,
            "drop_percent": drop,
        });
    }
    println!("{json}");
    Ok(())
}

/// Options of `mailward-bench ingest --distinct-sources`.
pub struct DistinctOptions {
    /// Records of the one report, each from its own source address.
    pub records: usize,
    /// Times the import is run (each on a fresh data directory); the median counts.
    pub runs: usize,
    /// The `mailward` binary timed.
    pub mailward: PathBuf,
    pub parsedmarc: bool,
    pub dir: Option<PathBuf>,
}

/// CPU time and peak RSS (MiB) of every waited-for child so far, from `getrusage`.
fn children_usage() -> (Duration, f64) {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or((Duration::ZERO, 0.0), |u| {
        let t = |tv: nix::sys::time::TimeVal| {
            Duration::new(tv.tv_sec() as u64, tv.tv_usec() as u32 * 1000)
        };
        (
            t(u.user_time()) + t(u.system_time()),
            u.max_rss() as f64 / 1024.0,
        )
    })
}

/// `mailward-bench ingest --distinct-sources`: one report whose every record comes from its own
/// address (a large receiver's report for a big sender), imported by the `mailward import`
/// process into a data directory where an organization watches the domain; the whole process
/// is timed (start, opening the store, reading, folding, writing, exit), wall and CPU, against
/// parsedmarc's parse of the same file.
pub async fn distinct_sources(options: DistinctOptions) -> anyhow::Result<()> {
    anyhow::ensure!(
        options.mailward.is_file(),
        "{} is not a file (build it: cargo build --release -p mailward)",
        options.mailward.display()
    );
    let (dir, _keep) = corpus_dir(options.dir.clone())?;
    let mut files = write_corpus(&dir, options.records, options.records)?;
    let file = files.pop().context("no report written")?;
    let size = std::fs::metadata(&file.path)?.len();
    println!(
        "one report of {} records, each from its own address ({:.1} MiB)",
        file.records,
        size as f64 / 1024.0 / 1024.0
    );
    let mut runs = Vec::new();
    for run in 1..=options.runs.max(1) {
        let data = tempfile::tempdir()?;
        let org = {
            let (_state, _delivery, org) = watched_state(data.path()).await?;
            org
        };
        let (cpu_before, _) = children_usage();
        let wall = Instant::now();
        let out = std::process::Command::new(&options.mailward)
            .arg("import")
            .arg("--org")
            .arg(org.to_string())
            .arg(&file.path)
            .env("MAILWARD_DATA_DIR", data.path())
            .env_remove("MAILWARD_LOG")
            .output()?;
        let wall = wall.elapsed();
        let (cpu_after, peak) = children_usage();
        let stdout = String::from_utf8_lossy(&out.stdout);
        anyhow::ensure!(
            out.status.success()
                && stdout.contains("\"status\":\"imported\"")
                && stdout.contains(&format!("\"records\":{}", file.records)),
            "mailward import did not import the report: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cpu = cpu_after.saturating_sub(cpu_before);
        eprintln!(
            "mailward import run {run}: {:.3} s wall, {:.3} s CPU, peak RSS so far {peak:.0} MiB",
            wall.as_secs_f64(),
            cpu.as_secs_f64()
        );
        runs.push((wall, cpu, peak));
    }
    let all: Vec<serde_json::Value> = runs
        .iter()
        .map(|(w, c, _)| serde_json::json!({"wall_seconds": w.as_secs_f64(), "cpu_seconds": c.as_secs_f64()}))
        .collect();
    // The peak of the children is the highest of any run (getrusage keeps the maximum).
    let peak = runs.iter().map(|r| r.2).fold(0.0, f64::max);
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let wall = median(runs.iter().map(|r| r.0).collect());
    let cpu = median(runs.iter().map(|r| r.1).collect());
    let mut json = serde_json::json!({
        "bench": "ingest-distinct-sources",
        "records": file.records,
        "file_bytes": size,
        "mailward_import": {
            "wall_seconds": wall.as_secs_f64(),
            "cpu_seconds": cpu.as_secs_f64(),
            "peak_rss_mib": peak,
            "runs": all,
        },
    });
    println!(
        "mailward import (whole process, median of {}): {:.3} s wall, {:.3} s CPU, peak RSS {peak:.0} MiB (target < 200)",
        runs.len(),
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
    if options.parsedmarc {
        eprintln!("parsedmarc {PARSEDMARC_VERSION}: parsing the same file ...");
        match run_parsedmarc(std::slice::from_ref(&file)) {
            Ok(p) => {
                let per_core = p.cpu_seconds / cpu.as_secs_f64().max(1e-9);
                let per_wall = p.seconds / wall.as_secs_f64().max(1e-9);
                println!(
                    "parsedmarc {PARSEDMARC_VERSION} parse only: {:.2} s wall, {:.2} s CPU; Mailward is {per_core:.0}x per core, {per_wall:.0}x in wall time (target >= 100x, goal 300x)",
                    p.seconds, p.cpu_seconds
                );
                json["parsedmarc"] = serde_json::json!({
                    "version": PARSEDMARC_VERSION,
                    "seconds": p.seconds,
                    "cpu_seconds": p.cpu_seconds,
                });
                json["ratio_per_core"] = per_core.into();
                json["ratio_wall"] = per_wall.into();
            }
            Err(why) => {
                println!("parsedmarc {PARSEDMARC_VERSION}: NOT MEASURED ({why})");
                json["parsedmarc"] = serde_json::json!({"error": why});
            }
        }
    }
    println!("{json}");
    Ok(())
}

/// `mailward-bench ingest-big`: peak memory of importing one large report.
pub async fn big(records: usize, gzip: bool, dir: Option<PathBuf>) -> anyhow::Result<()> {
    let (dir, _keep) = corpus_dir(dir)?;
    let mut files = write_corpus(&dir, records, records)?;
    let file = files.pop().context("no report written")?;
    let file = if gzip {
        let gz = file.path.with_extension("xml.gz");
        let mut enc = flate2::write::GzEncoder::new(
            std::io::BufWriter::new(std::fs::File::create(&gz)?),
            flate2::Compression::default(),
        );
        std::io::copy(&mut std::fs::File::open(&file.path)?, &mut enc)?;
        enc.finish()?.flush()?;
        std::fs::remove_file(&file.path)?;
        CorpusFile {
            path: gz,
            records: file.records,
        }
    } else {
        file
    };
    let size = std::fs::metadata(&file.path)?.len();
    let data = tempfile::tempdir()?;
    let (state, delivery, _) = watched_state(data.path()).await?;
    let m = ingest_files(&state, &delivery, std::slice::from_ref(&file), 1).await?;
    let mib = |b: u64| b as f64 / 1024.0 / 1024.0;
    println!(
        "one report of {} records ({:.1} MiB file{}) imported in {:.2} s: peak RSS {:.0} MiB (RSS before {:.0} MiB: peak growth {:.0} MiB, {:.2}x the file)",
        m.records,
        mib(size),
        if gzip { ", gzip" } else { "" },
        m.wall.as_secs_f64(),
        m.peak_rss_mib,
        m.rss_before_mib,
        m.peak_rss_mib - m.rss_before_mib,
        (m.peak_rss_mib - m.rss_before_mib) / mib(size)
    );
    println!(
        "{}",
        serde_json::json!({
            "bench": "ingest-big",
            "records": m.records,
            "file_bytes": size,
            "gzip": gzip,
            "wall_seconds": m.wall.as_secs_f64(),
            "peak_rss_mib": m.peak_rss_mib,
            "rss_before_mib": m.rss_before_mib,
        })
    );
    Ok(())
}
