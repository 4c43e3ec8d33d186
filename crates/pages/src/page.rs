//! The one page builder every report page is made with: a `Page` takes
//! sections, paragraphs, `<pre>` blocks, figures, definition lists and
//! `Table`s as plain text and writes the markup, escaping everything but
//! the SVG drawings — so no page writes a tag of its own and none can
//! forget to escape what a user or the network supplied. Every block ends
//! its line, so the markup reads as the page is built.

use super::html::{escape, svg_body, STYLE};
use std::fmt::Write as _;

/// A page being built; `finish` closes it.
pub struct Page {
    out: String,
}

impl Page {
    /// A page with `title` in its head and as its heading.
    pub fn new(title: &str) -> Page {
        Page::with_head(title, "")
    }

    /// A page that the browser loads again every `seconds` (a live view
    /// with no script: `netagg watch --listen`).
    pub fn refreshed(title: &str, seconds: u32) -> Page {
        Page::with_head(
            title,
            &format!("<meta http-equiv=\"refresh\" content=\"{seconds}\">"),
        )
    }

    fn with_head(title: &str, more: &str) -> Page {
        let title = escape(title);
        Page {
            out: format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
                 <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">{more}\
                 <title>{title}</title><style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
            ),
        }
    }

    /// The page's markup, closed.
    pub fn finish(mut self) -> String {
        self.out.push_str("</body></html>\n");
        self.out
    }

    /// A section with `heading`, holding what `body` adds; `id` (when not
    /// empty) is the anchor the tests and links find it by.
    pub fn section(&mut self, id: &str, heading: &str, body: impl FnOnce(&mut Page)) -> &mut Page {
        match id {
            "" => self.out.push_str("<section>"),
            id => {
                let _ = write!(self.out, "<section id=\"{}\">", escape(id));
            }
        }
        self.element("h2", "", heading);
        body(self);
        self.out.push_str("</section>\n");
        self
    }

    /// A heading within a section.
    pub fn heading(&mut self, text: &str) -> &mut Page {
        self.element("h3", "", text)
    }

    /// A paragraph of text.
    pub fn paragraph(&mut self, text: &str) -> &mut Page {
        self.element("p", "", text)
    }

    /// A paragraph in the small print that explains a table or a chart.
    pub fn note(&mut self, text: &str) -> &mut Page {
        self.element("p", "note", text)
    }

    /// A paragraph marked as a warning about what the page shows.
    pub fn caution(&mut self, text: &str) -> &mut Page {
        self.element("p", "caution", text)
    }

    /// Preformatted text: a plan, a command.
    pub fn pre(&mut self, text: &str) -> &mut Page {
        self.element("pre", "", text)
    }

    /// A program's own text output, wrapped at words.
    pub fn summary(&mut self, text: &str) -> &mut Page {
        self.element("pre", "summary", text)
    }

    /// `svg` (a drawing, put in as it is) with its caption.
    pub fn figure(&mut self, svg: &str, caption: &str) -> &mut Page {
        let _ = writeln!(
            self.out,
            "<figure><div class=\"scroll\">{}</div><figcaption>{}</figcaption></figure>",
            svg_body(svg),
            escape(caption)
        );
        self
    }

    /// Names and their values as the context's two columns, ending with
    /// the command line as code.
    pub fn context_list<N: AsRef<str>, V: AsRef<str>>(
        &mut self,
        items: impl IntoIterator<Item = (N, V)>,
        command_line: &str,
    ) -> &mut Page {
        self.out.push_str("<dl class=\"context\">\n");
        for (name, value) in items {
            let (name, value) = (escape(name.as_ref()), escape(value.as_ref()));
            let _ = writeln!(self.out, "<dt>{name}</dt><dd>{value}</dd>");
        }
        let _ = writeln!(
            self.out,
            "<dt>Command line</dt><dd><code>{}</code></dd></dl>",
            escape(command_line)
        );
        self
    }

    /// A list of labelled explanations: "**label**: text".
    pub fn labelled_list(&mut self, class: &str, items: &[(&str, &str)]) -> &mut Page {
        let _ = write!(self.out, "<ul class=\"{}\">", escape(class));
        for (label, text) in items {
            let _ = write!(
                self.out,
                "<li><b>{}</b>: {}</li>",
                escape(label),
                escape(text)
            );
        }
        self.out.push_str("</ul>\n");
        self
    }

    /// `table`, in its own sideways-scrolling box.
    pub fn table(&mut self, table: &Table) -> &mut Page {
        table.write(&mut self.out);
        self
    }

    /// The closing section: each step's explanation and its command.
    pub fn reproduce(&mut self, steps: &[(&str, &str)]) -> &mut Page {
        self.section("reproduce", "How to reproduce", |page| {
            for (explanation, command) in steps {
                page.paragraph(explanation).pre(command);
            }
        })
    }

    fn element(&mut self, tag: &str, class: &str, text: &str) -> &mut Page {
        let text = escape(text);
        let _ = match class {
            "" => writeln!(self.out, "<{tag}>{text}</{tag}>"),
            class => writeln!(self.out, "<{tag} class=\"{class}\">{text}</{tag}>"),
        };
        self
    }
}

/// One cell of a table: its text, its class (which aligns and colours it:
/// the style sheet's label, text, reason, bad, better, worse; none for a
/// number) and the tooltip that explains it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    text: String,
    class: &'static str,
    title: Option<String>,
}

impl Cell {
    /// A cell of the style sheet's `class` ("text bad", "text better", …).
    pub fn new(class: &'static str, text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            class,
            title: None,
        }
    }

    /// A figure, right-aligned.
    pub fn number(text: impl Into<String>) -> Cell {
        Cell::new("", text)
    }

    /// What a row is about, left-aligned and kept on one line.
    pub fn label(text: impl Into<String>) -> Cell {
        Cell::new("label", text)
    }

    /// Words, left-aligned and wrapped.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell::new("text", text)
    }

    /// The cell with a tooltip (an empty one is kept: it says there is
    /// nothing to add).
    pub fn titled(mut self, title: impl Into<String>) -> Cell {
        self.title = Some(title.into());
        self
    }
}

/// A table of text cells under a header row, in a box that scrolls
/// sideways on its own when it is wider than the page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    head: Vec<String>,
    rows: Vec<(&'static str, Vec<Cell>)>,
    words: bool,
}

impl Table {
    /// A table with these header cells and no rows yet.
    pub fn new<H: Into<String>>(head: impl IntoIterator<Item = H>) -> Table {
        Table {
            head: head.into_iter().map(Into::into).collect(),
            ..Table::default()
        }
    }

    /// Its header cells align left, as a table of words reads best.
    pub fn of_words(mut self) -> Table {
        self.words = true;
        self
    }

    /// A row of `cells`.
    pub fn row(&mut self, cells: impl IntoIterator<Item = Cell>) -> &mut Table {
        self.styled_row("", cells)
    }

    /// A row set apart by `class` (the style sheet's "improvement").
    pub fn styled_row(
        &mut self,
        class: &'static str,
        cells: impl IntoIterator<Item = Cell>,
    ) -> &mut Table {
        self.rows.push((class, cells.into_iter().collect()));
        self
    }

    fn write(&self, out: &mut String) {
        let words = if self.words { " class=\"words\"" } else { "" };
        let _ = write!(out, "<div class=\"scroll\"><table{words}><thead><tr>");
        for head in &self.head {
            let _ = write!(out, "<th>{}</th>", escape(head));
        }
        out.push_str("</tr></thead><tbody>\n");
        for (class, cells) in &self.rows {
            match *class {
                "" => out.push_str("<tr>"),
                class => {
                    let _ = write!(out, "<tr class=\"{class}\">");
                }
            }
            for cell in cells {
                out.push_str("<td");
                if !cell.class.is_empty() {
                    let _ = write!(out, " class=\"{}\"", cell.class);
                }
                if let Some(title) = &cell.title {
                    let _ = write!(out, " title=\"{}\"", escape(title));
                }
                let _ = write!(out, ">{}</td>", escape(&cell.text));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_escapes_its_cells_and_keeps_their_classes() {
        let mut table = Table::new(["a<b", ""]).of_words();
        table.row([Cell::label("x&y"), Cell::number("1")]);
        let why = Cell::text("t").titled("\"why\"");
        table.styled_row("improvement", [why, Cell::new("text bad", "no")]);
        let mut markup = String::new();
        table.write(&mut markup);
        assert_eq!(
            markup,
            "<div class=\"scroll\"><table class=\"words\"><thead><tr><th>a&lt;b</th><th></th>\
             </tr></thead><tbody>\n<tr><td class=\"label\">x&amp;y</td><td>1</td></tr>\n\
             <tr class=\"improvement\"><td class=\"text\" title=\"&quot;why&quot;\">t</td>\
             <td class=\"text bad\">no</td></tr>\n</tbody></table></div>\n"
        );
    }

    #[test]
    fn a_page_escapes_text_but_not_its_drawings() {
        let mut page = Page::new("a <title>");
        page.section("s", "H & h", |page| {
            page.note("1 < 2").figure("<?xml?><svg/>", "<caption>");
        });
        let html = page.finish();
        assert!(html.contains("<title>a &lt;title&gt;</title>"));
        assert!(html.contains(
            "<section id=\"s\"><h2>H &amp; h</h2>\n<p class=\"note\">1 &lt; 2</p>\n<figure>"
        ));
        assert!(html.contains("<div class=\"scroll\"><svg/></div><figcaption>&lt;caption&gt;"));
        assert!(html.ends_with("</section>\n</body></html>\n"));
    }
}
