//! One HTTP/1.x request read under hostile-input bounds, and one response
//! written. The request line and headers together are at most
//! [`MAX_HEAD`] bytes; each read waits at most [`READ_TIMEOUT`] and the
//! whole head must arrive within [`REQUEST_DEADLINE`] (a slowloris client
//! is cut); only GET and HEAD are served; a request announcing a body is
//! refused before the body is read (the server is read-only, nothing it
//! serves takes one). Every connection carries one request and is closed
//! after its response, so no state survives between requests.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// The request line and every header, with their line ends.
pub const MAX_HEAD: usize = 8 * 1024;
/// The longest one read may wait for the client.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest the whole request head may take to arrive.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(20);
/// The longest one write may wait for the client to take bytes, and the
/// longest the whole response may take (a client that reads a byte now
/// and then is cut too).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
pub const RESPONSE_DEADLINE: Duration = Duration::from_secs(30);
/// After refusing a request, what is drained of what the client still
/// sends (so it reads the refusal instead of a reset), and for how long.
const DRAIN_BYTES: usize = 1024 * 1024;
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// A request that can be answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// HEAD: the headers of GET's answer without its body.
    pub head_only: bool,
    /// The path, without the query.
    pub path: String,
    /// The Accept header ("" when absent).
    pub accept: String,
}

/// A response: status, content type, extra headers and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// A response with `body` of `content_type`.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// A plain-text refusal or error, saying why.
    pub fn error(status: u16, why: &str) -> Response {
        Response::new(
            status,
            TEXT,
            format!("{status} {}: {why}\n", reason(status)),
        )
    }

    /// This response with one more header.
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }
}

pub const TEXT: &str = "text/plain; charset=utf-8";

/// The reason phrase of the statuses this server sends.
fn reason(status: u16) -> &'static str {
    const REASONS: &[(u16, &str)] = &[
        (200, "OK"),
        (400, "Bad Request"),
        (404, "Not Found"),
        (405, "Method Not Allowed"),
        (408, "Request Timeout"),
        (413, "Content Too Large"),
        (431, "Request Header Fields Too Large"),
        (500, "Internal Server Error"),
        (503, "Service Unavailable"),
        (505, "HTTP Version Not Supported"),
    ];
    REASONS
        .iter()
        .find(|(s, _)| *s == status)
        .map_or("Error", |(_, r)| r)
}

/// Reads one request head from `stream`: the request, or the refusal to
/// send (None: the client went away or sent nothing, answer nothing).
pub fn read_request(stream: &mut TcpStream) -> Result<Request, Option<Response>> {
    read_request_within(stream, REQUEST_DEADLINE, READ_TIMEOUT)
}

/// [`read_request`] with its two bounds given (the tests' are seconds
/// shorter than the server's).
pub fn read_request_within(
    stream: &mut TcpStream,
    deadline: Duration,
    read_timeout: Duration,
) -> Result<Request, Option<Response>> {
    let started = Instant::now();
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = head_end(&head) {
            head.truncate(end);
            return parse(&head).map_err(Some);
        }
        if head.len() >= MAX_HEAD {
            return Err(Some(Response::error(
                431,
                "the request line and headers exceed 8 KiB",
            )));
        }
        let left = deadline.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(Some(Response::error(408, "the request took too long")));
        }
        let _ = stream.set_read_timeout(Some(left.min(read_timeout)));
        let room = (MAX_HEAD - head.len()).min(chunk.len());
        match stream.read(&mut chunk[..room]) {
            Ok(0) if head.is_empty() => return Err(None),
            Ok(0) => return Err(Some(Response::error(400, "the request ended early"))),
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(match head.is_empty() {
                    true => None,
                    false => Some(Response::error(408, "the request took too long")),
                })
            }
            Err(_) => return Err(None),
        }
    }
}

/// Where the head ends (before its blank line), if it has.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let crlf = bytes.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = bytes.windows(2).position(|w| w == b"\n\n");
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The request a complete head asks, or the refusal.
pub fn parse(head: &[u8]) -> Result<Request, Response> {
    let text = std::str::from_utf8(head)
        .map_err(|_| Response::error(400, "the request is not UTF-8 text"))?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().unwrap_or_default();
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts.as_slice() else {
        return Err(Response::error(
            400,
            "the request line is not METHOD TARGET VERSION",
        ));
    };
    if !matches!(*version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(Response::error(
            505,
            "only HTTP/1.0 and HTTP/1.1 are served",
        ));
    }
    let mut accept = String::new();
    let mut body = false;
    for header in lines {
        let Some((name, value)) = header.split_once(':') else {
            return Err(Response::error(400, "a header line has no ':'"));
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "accept" => accept = value.to_string(),
            "content-length" => body |= value != "0",
            "transfer-encoding" => body = true,
            _ => {}
        }
    }
    if !matches!(*method, "GET" | "HEAD") {
        return Err(
            Response::error(405, "only GET and HEAD are served (read-only)")
                .with("Allow", "GET, HEAD"),
        );
    }
    if body {
        return Err(Response::error(413, "a request body is not accepted"));
    }
    Ok(Request {
        head_only: *method == "HEAD",
        path: origin_path(target)?,
        accept,
    })
}

/// The path of a request target: origin form `/path?query`, or the
/// absolute form `http://authority/path` servers must accept (its
/// authority ignored: nothing is fetched from anywhere).
fn origin_path(target: &str) -> Result<String, Response> {
    let rest = match target.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => {
            rest.find('/').map_or("/", |i| &rest[i..])
        }
        _ => target,
    };
    if !rest.starts_with('/') {
        return Err(Response::error(400, "the request target is not a path"));
    }
    let path = rest.split(['?', '#']).next().unwrap_or("/");
    Ok(path.to_string())
}

/// Writes `response` (headers only for HEAD) and closes the connection; a
/// refusal first drains, bounded, what the client still sends.
pub fn respond(stream: &mut TcpStream, response: &Response, head_only: bool) {
    write(stream, response, head_only, RESPONSE_DEADLINE);
    let _ = stream.shutdown(Shutdown::Write);
    if response.status >= 400 {
        drain(stream);
    }
}

/// Writes `response`, giving up when the client has not taken it all
/// within `deadline`.
pub fn write(stream: &mut TcpStream, response: &Response, head_only: bool, deadline: Duration) {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    );
    for (name, value) in &response.headers {
        // Values are the server's own; a line end would split the header.
        let value: String = value.chars().filter(|c| !c.is_control()).collect();
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    if !head_only {
        bytes.extend_from_slice(&response.body);
    }
    let until = Instant::now() + deadline;
    let mut rest = bytes.as_slice();
    while !rest.is_empty() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero()
            || stream
                .set_write_timeout(Some(left.min(WRITE_TIMEOUT)))
                .is_err()
        {
            return;
        }
        match stream.write(rest) {
            Ok(0) => return,
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Reads and drops what the client still sends, at most [`DRAIN_BYTES`]
/// for at most [`DRAIN_TIME`]: closing with unread bytes would reset the
/// connection before the client reads why it was refused.
fn drain(stream: &mut TcpStream) {
    let until = Instant::now() + DRAIN_TIME;
    let mut buf = [0u8; 4096];
    let mut total = 0;
    while total < DRAIN_BYTES {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
}
