//! Where runs go when an experiment compares paths rather than settings:
//! the plan's `[targets]` table (label = "host[:port]", or a table with
//! host, port, what the target is, or why it is not available) read and
//! checked, and written back; each target is kept as the record's
//! `resultsdb::model::Target`.

use netperf_results::model::Target;

/// Most targets one plan may name.
const MAX_TARGETS: usize = 256;
/// Longest description or reason kept.
const MAX_TEXT: usize = 400;

/// The target as the plan file writes it back.
pub fn target_toml(target: &Target) -> toml::Value {
    let mut t = toml::Table::new();
    if target.unavailable.is_none() {
        t.insert("host".into(), toml::Value::String(target.host.clone()));
        t.insert("port".into(), toml::Value::Integer(i64::from(target.port)));
    }
    if !target.about.is_empty() {
        t.insert("about".into(), toml::Value::String(target.about.clone()));
    }
    if let Some(why) = &target.unavailable {
        t.insert("unavailable".into(), toml::Value::String(why.clone()));
    }
    toml::Value::Table(t)
}

/// Splits "host", "host:port", "[v6]:port" or a bare IPv6 address.
pub fn split_address(text: &str, default_port: u16) -> Result<(String, u16), String> {
    let text = text.trim();
    let bad = |why: &str| format!("address \"{text}\" {why}");
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| bad("has no closing ]"))?;
        match after {
            "" => (host, None),
            _ => (
                host,
                Some(
                    after
                        .strip_prefix(':')
                        .ok_or_else(|| bad("needs :PORT after ]"))?,
                ),
            ),
        }
    } else if text.matches(':').count() > 1 {
        (text, None)
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("has no host name"));
    }
    let port = match port {
        None => default_port,
        Some(p) => match p.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => return Err(bad("has a port outside 1..65535")),
        },
    };
    Ok((host.to_string(), port))
}

/// Reads the `[targets]` table: label -> "host[:port]" or
/// { host, port, about, unavailable }.
pub fn parse_targets(table: &toml::Table, default_port: u16) -> Result<Vec<Target>, String> {
    if table.len() > MAX_TARGETS {
        return Err(format!("targets: more than {MAX_TARGETS}"));
    }
    let mut out = Vec::with_capacity(table.len());
    for (label, value) in table {
        let label =
            super::factors::check_level("target", label).map_err(|e| format!("targets: {e}"))?;
        let bad = |why: String| format!("targets.\"{label}\": {why}");
        let target = match value {
            toml::Value::String(address) => {
                let (host, port) = split_address(address, default_port).map_err(bad)?;
                Target::reachable(&label, host, port)
            }
            toml::Value::Table(entry) => entry_target(&label, entry, default_port).map_err(bad)?,
            _ => return Err(bad("expected \"host[:port]\" or a table".into())),
        };
        out.push(target);
    }
    Ok(out)
}

fn entry_target(label: &str, entry: &toml::Table, default_port: u16) -> Result<Target, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match entry.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) if s.chars().count() <= MAX_TEXT => Ok(Some(s.clone())),
            Some(toml::Value::String(_)) => Err(format!("{key} is longer than {MAX_TEXT}")),
            Some(_) => Err(format!("{key} must be text")),
        }
    };
    if let Some(key) = entry
        .keys()
        .find(|k| !["host", "port", "about", "unavailable"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown key \"{key}\": expected host, port, about, unavailable"
        ));
    }
    let port = match entry.get("port") {
        None => None,
        Some(toml::Value::Integer(p)) if (1..=65_535).contains(p) => Some(*p as u16),
        Some(_) => return Err("port must be 1..65535".into()),
    };
    let about = text("about")?.unwrap_or_default();
    let unavailable = text("unavailable")?;
    let (host, port) = match (text("host")?, &unavailable) {
        (Some(_), Some(_)) => return Err("has both host and unavailable".into()),
        (None, Some(_)) => (String::new(), port.unwrap_or(default_port)),
        (None, None) => return Err("needs host (or unavailable = \"why\")".into()),
        (Some(address), None) => {
            let (host, from_address) = split_address(&address, default_port)?;
            (host, port.unwrap_or(from_address))
        }
    };
    Ok(Target {
        label: label.to_string(),
        host,
        port,
        about,
        unavailable,
    })
}

/// The targets of a plan with a `target` factor: the table's entries, or
/// (no table) each level read as an address. Every level must name an
/// available target; unavailable ones are kept for the report.
pub fn resolve_levels(
    levels: &[String],
    table: Vec<Target>,
    default_port: u16,
) -> Result<Vec<Target>, String> {
    if table.is_empty() {
        return levels
            .iter()
            .map(|level| {
                let (host, port) = split_address(level, default_port)
                    .map_err(|e| format!("factor target: {e} (or name it in [targets])"))?;
                Ok(Target::reachable(level, host, port))
            })
            .collect();
    }
    for level in levels {
        match table.iter().find(|t| &t.label == level) {
            None => return Err(format!("factor target: \"{level}\" is not in [targets]")),
            Some(Target {
                unavailable: Some(why),
                ..
            }) => {
                return Err(format!(
                    "factor target: \"{level}\" is marked unavailable ({why})"
                ))
            }
            Some(_) => {}
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_with_and_without_ports() {
        let ok = [
            ("198.18.1.2", ("198.18.1.2", 12865)),
            ("198.18.1.2:42", ("198.18.1.2", 42)),
            ("netserver.ns.svc", ("netserver.ns.svc", 12865)),
            ("[2001:2::1]:7", ("2001:2::1", 7)),
            ("[2001:2::1]", ("2001:2::1", 12865)),
            ("2001:2::1", ("2001:2::1", 12865)),
        ];
        for (text, (host, port)) in ok {
            assert_eq!(
                split_address(text, 12865).unwrap(),
                (host.to_string(), port)
            );
        }
        for bad in ["", ":5", "h:0", "h:70000", "[::1", "[::1]5", "a b"] {
            assert!(split_address(bad, 1).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_table_takes_strings_and_entries() {
        let table: toml::Table = toml::from_str(
            r#"
"same node" = "198.18.1.2:12866"
"other zone" = { unavailable = "the cluster has one zone" }
"vip" = { host = "198.18.1.100", about = "ClusterIP" }
"#,
        )
        .unwrap();
        let targets = parse_targets(&table, 12865).unwrap();
        assert_eq!(targets[0].port, 12866);
        assert_eq!(
            targets[1].unavailable.as_deref(),
            Some("the cluster has one zone")
        );
        assert_eq!(
            (targets[2].port, targets[2].about.as_str()),
            (12865, "ClusterIP")
        );
        let levels = vec!["same node".to_string(), "vip".to_string()];
        assert_eq!(
            resolve_levels(&levels, targets.clone(), 1).unwrap().len(),
            3
        );
        let e = resolve_levels(&["other zone".to_string()], targets, 1).unwrap_err();
        assert!(e.contains("unavailable"), "{e}");
    }

    #[test]
    fn bad_entries_are_refused_with_their_label() {
        for (text, expect) in [
            ("x = 5", "expected"),
            ("x = { port = 1 }", "needs host"),
            ("x = { host = \"h\", unavailable = \"u\" }", "both"),
            ("x = { host = \"h\", colour = \"red\" }", "unknown key"),
            ("x = { host = \"h\", port = 0 }", "port"),
        ] {
            let table: toml::Table = toml::from_str(text).unwrap();
            let e = parse_targets(&table, 1).unwrap_err();
            assert!(
                e.contains("targets.\"x\"") && e.contains(expect),
                "{text}: {e}"
            );
        }
    }
}
