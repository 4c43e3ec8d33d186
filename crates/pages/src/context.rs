//! The context a report page opens with, so a colleague handed the file can
//! tell what was measured: what ran (test or kind, its settings, the full
//! command line), where (every host with its kernel, CPU, interface,
//! driver, MTU and offloads, as far as each is known), when (start, end,
//! duration), with what (netperf-ng's version and git revision) — and how
//! to run it again. The same struct is the JSON's "context", so a page can
//! be drawn again from the JSON alone.

use super::html::shell_quote;
use super::page::{Cell, Page, Table};
use netperf_client::report::omni::record::EndRecord;
use netperf_data::net::interface::InterfaceInfo;
use netperf_data::net::sysinfo::SystemInfo;
use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One host of the run and what is known of it; an empty text is not known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    /// "SUT", "load generator", "netperf", "netserver".
    pub role: String,
    pub host: String,
    /// "Linux 6.1.0-18-amd64".
    pub kernel: String,
    pub cpu_model: String,
    pub cpu_count: Option<u32>,
    /// The interface(s) that carry the test's traffic there.
    pub interface: String,
    pub driver: String,
    pub mtu: String,
    /// "tso on, gso on, gro on, lro off".
    pub offloads: String,
    /// Why something is missing, when there is a reason to tell.
    #[serde(default)]
    pub note: String,
}

/// The run's context (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunContext {
    /// "netagg tps", "TCP_RR", ...
    pub what: String,
    /// The run's settings, in the order they are shown.
    pub settings: Vec<(String, String)>,
    pub command_line: Vec<String>,
    pub hosts: Vec<HostFacts>,
    /// RFC 3339 UTC.
    pub started: String,
    pub ended: String,
    pub duration_s: f64,
    pub version: String,
    pub revision: String,
    /// The command that runs it again.
    pub reproduce: String,
}

/// Values netperf reports for a fact it could not learn.
const NOT_KNOWN: &[&str] = &["", "Deprecated", "unknown", "-1"];

fn known(text: &str) -> String {
    let text = text.trim();
    if NOT_KNOWN.contains(&text) {
        String::new()
    } else {
        text.to_string()
    }
}

/// `args` as one shell command line.
pub fn command_text(args: &[String]) -> String {
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn rfc3339(at: SystemTime) -> String {
    netperf_base::timefmt::utc_timestamp(at.duration_since(UNIX_EPOCH).unwrap_or_default())
}

/// "tso on, gso on, ..." of a local interface; empty when it cannot be read.
fn local_offloads(interface: &str) -> String {
    netperf_data::net::offload::read(interface).map_or(String::new(), |s| s.features_text(", "))
}

/// Each interface's value, once each, in order: "mlx5_core" for two ports
/// of one driver, "veth, virtio_net" for two.
fn distinct(values: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values.filter(|v| !v.is_empty()) {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(", ")
}

impl HostFacts {
    /// This host, as `role`, with the interfaces that carry its traffic.
    pub fn this_host(role: &str, interfaces: &[String]) -> HostFacts {
        let system = SystemInfo::collect();
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        let per = |f: &dyn Fn(&String) -> String| distinct(interfaces.iter().map(f));
        let offloads: Vec<String> = interfaces
            .iter()
            .filter_map(|i| {
                let text = local_offloads(i);
                (!text.is_empty()).then(|| match interfaces.len() {
                    1 => text,
                    _ => format!("{i}: {text}"),
                })
            })
            .collect();
        HostFacts {
            role: role.to_string(),
            host: hostname,
            kernel: known(&format!("{} {}", system.sysname, system.release)),
            cpu_model: known(&system.cpu_model),
            cpu_count: Some(system.cpu_count),
            interface: interfaces.join(", "),
            driver: per(&|i| InterfaceInfo::for_interface(i).driver),
            mtu: per(&|i| {
                netperf_data::net::interface::sysfs_mtu(i).map_or(String::new(), |m| m.to_string())
            }),
            offloads: offloads.join("; "),
            note: String::new(),
        }
    }

    /// One end of a finished test as netperf recorded it (the remote end's
    /// facts come from our netserver; a stock one leaves them unknown).
    pub fn of_end(role: &str, host: &str, end: &EndRecord) -> HostFacts {
        let system = &end.system;
        let kernel = match (known(&system.sysname), known(&system.release)) {
            (name, release) if release.is_empty() => name,
            (name, release) => format!("{name} {release}").trim().to_string(),
        };
        HostFacts {
            role: role.to_string(),
            host: host.to_string(),
            kernel,
            cpu_model: known(&system.cpu_model),
            cpu_count: u32::try_from(end.cpu.count).ok().filter(|&c| c > 0),
            interface: known(&end.interface.name),
            driver: known(&end.interface.driver),
            mtu: String::new(),
            offloads: String::new(),
            note: String::new(),
        }
    }

    /// The CPU count our netserver's facts block gives (0: not sent), where
    /// the test's own figures left it unknown.
    pub fn with_cpu_count(
        mut self,
        facts: Option<&netperf_wire::system_facts::SystemFacts>,
    ) -> Self {
        if self.cpu_count.is_none() {
            self.cpu_count = facts.map(|f| f.cpu_count).filter(|&c| c > 0);
        }
        self
    }

    /// Adds the offloads and MTU our netserver reported for its interface.
    pub fn add_remote_offloads(&mut self, snapshot: &netperf_data::net::offload::OffloadSnapshot) {
        if self.interface.is_empty() {
            self.interface = snapshot.interface.clone();
        }
        if let Some(mtu) = snapshot.mtu {
            self.mtu = mtu.to_string();
        }
        self.offloads = snapshot.features_text(", ");
    }
}

impl RunContext {
    /// A context for `what`, run by `command_line`, starting now.
    pub fn new(what: &str, command_line: Vec<String>) -> RunContext {
        let reproduce = command_text(&command_line);
        RunContext {
            what: what.to_string(),
            command_line,
            started: rfc3339(SystemTime::now()),
            version: super::VERSION.to_string(),
            revision: super::REVISION.to_string(),
            reproduce,
            ..RunContext::default()
        }
    }

    /// A setting shown in the context, after those already given.
    pub fn setting(&mut self, name: &str, value: impl ToString) {
        self.settings.push((name.to_string(), value.to_string()));
    }

    /// The run began at `started` and lasted `duration`.
    pub fn timed(&mut self, started: SystemTime, duration: Duration) {
        self.started = rfc3339(started);
        self.ended = rfc3339(started + duration);
        self.duration_s = duration.as_secs_f64();
    }

    /// The context as JSON (the "context" member of a run's document).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The context of a JSON document that has one.
    pub fn from_json(doc: &serde_json::Value) -> Option<RunContext> {
        serde_json::from_value(doc.get("context")?.clone()).ok()
    }

    /// The page's opening section: the run's settings, then its hosts.
    pub fn add_to(&self, page: &mut Page) {
        let duration = format!("{:.1} s", self.duration_s);
        let version = format!("{} (git {})", self.version, self.revision);
        let mut items: Vec<(&str, &str)> = vec![("What ran", &self.what)];
        items.extend(self.settings.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        items.extend([
            ("Started", self.started.as_str()),
            ("Ended", self.ended.as_str()),
            ("Duration", duration.as_str()),
            ("netperf-ng", version.as_str()),
        ]);
        page.section("context", "Context", |page| {
            page.context_list(items, &command_text(&self.command_line));
            if !self.hosts.is_empty() {
                page.heading("Hosts").table(&self.hosts_table());
            }
        });
    }

    fn hosts_table(&self) -> Table {
        let head = "role host kernel CPU CPUs interface driver MTU offloads";
        let mut table = Table::new(head.split(' ')).of_words();
        let or_unknown = |text: &str| Cell::text(if text.is_empty() { "not known" } else { text });
        for h in &self.hosts {
            let count = h.cpu_count.map_or(String::new(), |c| c.to_string());
            // The note says why the offloads are missing, when that is known.
            let offloads = if h.offloads.is_empty() {
                &h.note
            } else {
                &h.offloads
            };
            let facts = [
                &h.host,
                &h.kernel,
                &h.cpu_model,
                &count,
                &h.interface,
                &h.driver,
                &h.mtu,
                offloads,
            ];
            table.row(std::iter::once(Cell::label(&h.role)).chain(facts.map(|f| or_unknown(f))));
        }
        table
    }

    /// The page's closing section: how to run it again.
    pub fn add_reproduce_to(&self, page: &mut Page) {
        self.add_reproduce_with(page, &[]);
    }

    /// How to run it again, then the `more` steps (explanation, command),
    /// such as drawing the page again from its saved run.
    pub fn add_reproduce_with(&self, page: &mut Page, more: &[(&str, &str)]) {
        let with = format!(
            "With netperf-ng {} (git {}) on the same hosts:",
            self.version, self.revision
        );
        let first = [(with.as_str(), self.reproduce.as_str())];
        let steps: Vec<(&str, &str)> = first.iter().chain(more).copied().collect();
        page.reproduce(&steps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_survives_its_json_and_is_escaped_on_the_page() {
        let mut ctx = RunContext::new(
            "netagg tps",
            vec!["netagg".into(), "--title".into(), "a <b>".into()],
        );
        ctx.setting("burst", 16);
        ctx.hosts.push(HostFacts {
            role: "load generator".into(),
            host: "198.18.1.2".into(),
            kernel: "Linux 6.1".into(),
            ..HostFacts::default()
        });
        ctx.timed(
            UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            Duration::from_secs(30),
        );
        let doc = serde_json::json!({ "context": ctx.to_json() });
        assert_eq!(RunContext::from_json(&doc), Some(ctx.clone()));
        let mut page = Page::new("context");
        ctx.add_to(&mut page);
        ctx.add_reproduce_to(&mut page);
        let page = page.finish();
        assert!(page.contains("<dd>16</dd>"));
        assert!(page.contains("netagg --title &#39;a &lt;b&gt;&#39;"));
        assert!(page.contains("2023-11-14T22:13:20.000Z"));
        assert!(page.contains("2023-11-14T22:13:50.000Z"));
        assert!(page.contains("30.0 s"));
        assert!(page.contains("<td class=\"text\">not known</td>"));
        assert!(page.contains(&crate::html::escape(&ctx.reproduce)));
    }

    #[test]
    fn netperfs_unknowns_are_not_shown_as_facts() {
        let mut end = EndRecord::default();
        end.system.sysname = "Deprecated".into();
        end.system.release = "Deprecated".into();
        end.interface.driver = "veth".into();
        let facts = HostFacts::of_end("netserver", "h", &end);
        assert_eq!(facts.kernel, "");
        assert_eq!(facts.driver, "veth");
    }

    #[test]
    fn this_host_knows_its_kernel_and_cpus() {
        let facts = HostFacts::this_host("SUT", &["lo".to_string()]);
        assert!(facts.kernel.starts_with("Linux"), "{facts:?}");
        assert!(facts.cpu_count.unwrap_or(0) >= 1);
        assert_eq!(facts.mtu, "65536");
    }
}
