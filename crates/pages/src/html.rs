//! The pieces every report page shares: escaping, shell quoting, the one
//! style sheet (1280 px, a phone — wide tables scroll inside their own box,
//! never the page — and paper) and an SVG file's drawing; `page` puts
//! them together.

/// Text made safe for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An argument as a POSIX shell reads it back: bare when it is plainly
/// safe, else in single quotes.
pub fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:,+-@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The style sheet of every page.
pub const STYLE: &str = "\
*{box-sizing:border-box}\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;line-height:1.45;color:#1a1a1a;\
background:#fff;margin:0 auto;padding:1rem;max-width:1200px;overflow-wrap:anywhere}\
h1{font-size:1.6rem;margin:.2rem 0 .6rem}h2{font-size:1.3rem;margin-top:2rem;border-bottom:1px solid #ccc}\
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}\
.scroll{overflow-x:auto;max-width:100%;margin:.4rem 0}\
table{border-collapse:collapse;font-variant-numeric:tabular-nums}\
th,td{border:1px solid #bbb;padding:.25rem .55rem;text-align:right;white-space:nowrap}\
th:first-child,td.label{text-align:left}thead th{background:#f0f3f7;white-space:normal;vertical-align:bottom}\
tr.improvement td{font-weight:600;background:#fafafa}\
td.text{text-align:left;white-space:normal}td.reason{min-width:12rem}\
table.words th{text-align:left}\
dl.context{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:0}\
dl.context dt{font-weight:600}dl.context dd{margin:0}\
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}\
pre{background:#f6f8fa;padding:.6rem;white-space:pre-wrap;word-break:break-all;margin:.4rem 0}\
figure{margin:1rem 0}figure svg{max-width:100%;height:auto;display:block}\
figcaption{font-size:.9rem;color:#444}\
.note{font-size:.9rem;color:#444}.caution{font-size:.9rem;border-left:4px solid #d55e00;padding-left:.6rem}\
pre.summary{white-space:pre-wrap;word-break:normal;overflow-wrap:anywhere}\
td.bad{color:#a3001b;font-weight:600}\
.better{color:#0a6b2d}.worse{color:#a3001b}\
@media (max-width:600px){body{padding:.5rem;font-size:15px}dl.context{grid-template-columns:1fr}\
dl.context dt{margin-top:.4rem}}\
@media print{body{max-width:none;padding:0;font-size:10pt}.scroll{overflow:visible}\
figure,table,pre{break-inside:avoid}h2,h3{break-after:avoid}th,td{white-space:normal}\
thead th{background:none}}";

/// The `<svg>` element of an SVG file (without an XML declaration).
pub fn svg_body(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |at| &svg[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<b a=\"x\">&'"),
            "&lt;b a=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn shell_quoting_round_trips_through_sh() {
        assert_eq!(shell_quote("plan.toml"), "plan.toml");
        assert_eq!(shell_quote("--seed=42"), "--seed=42");
        assert_eq!(shell_quote("my plan"), "'my plan'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn svg_body_drops_a_declaration() {
        assert_eq!(
            svg_body("<?xml version=\"1.0\"?>\n<svg></svg>"),
            "<svg></svg>"
        );
        assert_eq!(svg_body("<svg/>"), "<svg/>");
    }
}
