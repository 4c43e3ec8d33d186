//! The mesh's page (`netagg mesh`, and `netagg report` of its saved run):
//! the findings first — what an operator opens it for — then one heatmap
//! per metric with what its patterns mean, the pairs that failed or are
//! missing, every pair's figures when the mesh is small, the run's context
//! and how to run it or draw it again. netagg's mesh describes the run;
//! this lays it out with the one page builder.

use super::context::RunContext;
use super::heatmap::{heatmap_svg, Heatmap};
use super::page::{Page, Table};

/// What the mesh's page shows.
#[derive(Debug, Clone, Copy)]
pub struct MeshPage<'a> {
    /// The page's title and heading ("netagg mesh: 12 endpoints").
    pub title: &'a str,
    pub context: &'a RunContext,
    /// The findings as the text output leads with them (empty: not shown).
    pub summary: &'a str,
    /// One row per finding; None when nothing stood out.
    pub findings: Option<&'a Table>,
    /// What "nothing stood out" meant for this run (the thresholds), shown
    /// when there are no findings.
    pub nothing_found: &'a str,
    /// One heatmap per metric, in the order shown.
    pub maps: &'a [Heatmap<'a>],
    /// Pairs that failed (with the reason), pairs missing (an interrupted
    /// run), anything else the reader must know; one line each.
    pub problems: &'a [String],
    /// Every pair's figures, for a mesh small enough to read them.
    pub pairs: Option<&'a Table>,
    /// The saved run's file name, for the step that draws the page again.
    pub saved_run: &'a str,
}

/// What each pattern on a heatmap says, for the page and the docs.
pub const READING: [(&str, &str); 6] = [
    (
        "A red row",
        "that endpoint sends badly to every destination: its host, NIC or link in the sending direction",
    ),
    (
        "A red column",
        "that endpoint receives badly from every source",
    ),
    (
        "A red cross (its row and its column)",
        "that endpoint is bad both ways: a bad node",
    ),
    (
        "A red block on a zone's rows and another's columns",
        "the link between the two zones, in that direction",
    ),
    (
        "One red cell",
        "one path in one direction (a route, a queue, a policy on that pair)",
    ),
    (
        "Hatched",
        "no value: the pair was not asked for, failed (see Problems) or was not reached",
    ),
];

/// The page's HTML.
pub fn mesh_page(mesh: &MeshPage) -> String {
    let mut page = Page::new(mesh.title);
    page.section("findings", "Findings", |page| {
        if !mesh.summary.is_empty() {
            page.summary(mesh.summary);
        }
        match mesh.findings {
            Some(table) => {
                page.table(table);
            }
            None => {
                page.paragraph(mesh.nothing_found);
            }
        }
    });
    page.section("heatmaps", "Heatmaps", |page| {
        page.note(
            "Each cell is one ordered pair: the row is the source, the column the destination. \
             Its colour is its ratio to the metric's median across the grid, red for worse \
             whichever way the metric is better; what the findings name is outlined.",
        );
        page.labelled_list("reading", &READING);
        for map in mesh.maps {
            page.figure(&heatmap_svg(map), &caption(map));
        }
    });
    if !mesh.problems.is_empty() {
        page.section("problems", "Problems", |page| {
            for problem in mesh.problems {
                page.caution(problem);
            }
        });
    }
    if let Some(pairs) = mesh.pairs {
        page.section("pairs", "Every pair", |page| {
            page.table(pairs);
        });
    }
    mesh.context.add_to(&mut page);
    let redraw = format!("netagg report {} --out DIR", mesh.saved_run);
    mesh.context.add_reproduce_with(
        &mut page,
        &[("Draw this page again from the saved run:", &redraw)],
    );
    page.finish()
}

/// A heatmap's caption: its metric and which way is better.
fn caption(map: &Heatmap) -> String {
    let (better, worse) = match map.higher_is_better {
        true => ("higher", "lower"),
        false => ("lower", "higher"),
    };
    let values = map.values.iter().filter(|v| v.is_some()).count();
    format!(
        "{}: {} pairs with a value of {}; {better} is better, so red is {worse}.",
        map.title,
        values,
        map.labels.len() * map.labels.len().saturating_sub(1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heatmap::Mark;
    use crate::page::Cell;

    fn page_of(findings: Option<&Table>, problems: &[String], pairs: Option<&Table>) -> String {
        let labels: Vec<String> = ["a<1>", "b", "c"].map(String::from).to_vec();
        let zones = vec![None; 3];
        let values = vec![
            None,
            Some(10.0),
            Some(9.0),
            Some(9.5),
            None,
            None,
            Some(3.0),
            Some(9.8),
            None,
        ];
        let marks = [Mark::Row(2)];
        let map = Heatmap {
            title: "TCP_STREAM throughput",
            unit: "Mbit/s",
            labels: &labels,
            zones: &zones,
            values: &values,
            higher_is_better: true,
            marks: &marks,
        };
        let latency = Heatmap {
            title: "TCP_RR P99 latency",
            unit: "us",
            higher_is_better: false,
            marks: &[],
            ..map
        };
        let mut context = RunContext::new("netagg mesh", vec!["netagg".into(), "mesh".into()]);
        context.setting("endpoints", 3);
        let started = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        context.timed(started, std::time::Duration::from_secs(40));
        mesh_page(&MeshPage {
            title: "netagg mesh: 3 endpoints",
            context: &context,
            summary: "c sends 68% lower throughput",
            findings,
            nothing_found: "Nothing stood out by more than 10% and 4 times the noise.",
            maps: &[map, latency],
            problems,
            pairs,
            saved_run: "mesh.json",
        })
    }

    #[test]
    fn the_findings_lead_then_a_heatmap_per_metric() {
        let mut findings = Table::new(["where", "metric", "effect"]);
        findings.row([
            Cell::label("c <sending>"),
            Cell::text("throughput"),
            Cell::number("-68%"),
        ]);
        let problems = ["b → c failed: connection refused".to_string()];
        let html = page_of(Some(&findings), &problems, None);
        let at = |what: &str| html.find(what).unwrap_or_else(|| panic!("no {what}"));
        assert!(at("id=\"findings\"") < at("id=\"heatmaps\""));
        assert!(at("id=\"heatmaps\"") < at("id=\"problems\""));
        assert!(at("id=\"problems\"") < at("id=\"context\""));
        assert!(at("id=\"context\"") < at("id=\"reproduce\""));
        assert!(html.contains("c &lt;sending&gt;"));
        assert!(!html.contains("Nothing stood out"));
        assert_eq!(html.matches("<svg").count(), 2);
        assert_eq!(html.matches("<figcaption>").count(), 2);
        assert!(html.contains(
            "TCP_RR P99 latency: 5 pairs with a value of 6; lower is better, so red is higher."
        ));
        assert!(html.contains("a&lt;1&gt;"), "names escaped in the drawing");
        assert!(!html.contains("a<1>"));
        assert!(html.contains("b → c failed: connection refused"));
        assert!(html.contains("netagg report mesh.json --out DIR"));
        assert!(!html.contains("id=\"pairs\""));
        assert!(html.contains("A red cross (its row and its column)"));
        // The two drawings' hatches are told apart.
        let ids: Vec<&str> = html
            .match_indices("<pattern id=\"")
            .map(|(i, _)| &html[i + 13..i + 27])
            .collect();
        assert_eq!(ids.len(), 2);
        assert_ne!(ids[0], ids[1]);
    }

    #[test]
    fn nothing_found_says_so_and_a_small_mesh_lists_its_pairs() {
        let mut pairs = Table::new(["source", "destination", "Mbit/s"]);
        pairs.row([Cell::label("a"), Cell::label("b"), Cell::number("10")]);
        let html = page_of(None, &[], Some(&pairs));
        assert!(html.contains("<p>Nothing stood out by more than 10% and 4 times the noise.</p>"));
        assert!(!html.contains("id=\"problems\""));
        assert!(html.contains("id=\"pairs\""));
        assert_eq!(
            html,
            page_of(None, &[], Some(&pairs)),
            "the same bytes again"
        );
    }
}
