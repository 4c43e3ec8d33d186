//! The client of netserver's offload control (netperf-ng only): over one
//! control connection, read the offloads and MTU of the netserver's interface
//! that carries our traffic, change them where its operator allowed it
//! (`netserver --allow-offload-changes`), and restore them. netserver puts
//! back what a connection changed when it closes, so keep one
//! `RemoteOffloads` open for as long as the changes should last, and send a
//! request (a `read`) more often than the netserver's `--idle-timeout`
//! (default one hour), after which it closes an idle connection — and
//! restores.

use super::client::establish_within;
use super::error::ClientError;
use crate::cli::config::GlobalOptions;
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_data::net::offload::OffloadSnapshot;
use netperf_wire::offload::{
    offloads_in, Offload, OffloadBits, OffloadOp, OffloadRequest, OffloadResponse, OffloadStatus,
};
use netperf_wire::{kind, Message};
use std::time::Duration;

/// How long connecting may take.
const CONNECT_WAIT: Duration = Duration::from_secs(10);
/// How long an answer may take: netserver answers at once (a stock one too).
const ANSWER_WAIT: Duration = Duration::from_secs(30);
/// serv_errno a stock netserver (and one before offload control) sends
/// for a request type it does not know.
const UNKNOWN_REQUEST_ERRNO: i32 = 998;

/// Where a netserver is, as every message names it: "HOST port PORT"
/// (several netservers may share a host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetserverAt {
    pub host: String,
    /// The control port, as given (netperf's `-p`).
    pub port: String,
}

impl NetserverAt {
    pub fn new(host: &str, port: impl ToString) -> Self {
        NetserverAt {
            host: host.to_string(),
            port: port.to_string(),
        }
    }
}

impl std::fmt::Display for NetserverAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} port {}", self.host, self.port)
    }
}

/// Why the remote offloads could not be read or changed; one line each,
/// naming the netserver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteOffloadError {
    #[error("the remote netserver at {at} is not netperf-ng (or predates offload control): it cannot read or change offloads")]
    NotNetperfNg { at: NetserverAt },
    /// The operator's rule refuses the change; `detail` names the rule
    /// (older netservers: that changes are off).
    #[error(
        "the remote netserver at {at} refused to change the offloads{}: {}",
        of_interface(interface),
        rule_or_opt_in(detail)
    )]
    NotAllowed {
        at: NetserverAt,
        /// Empty when the netserver did not say.
        interface: String,
        detail: String,
    },
    #[error("the remote netserver at {at}: {detail}")]
    Refused {
        at: NetserverAt,
        offload: Offload,
        wanted: bool,
        detail: String,
    },
    #[error("the remote netserver at {at}: {detail}")]
    NoSuchInterface { at: NetserverAt, detail: String },
    /// netserver runs without root or CAP_NET_ADMIN.
    #[error("the remote netserver at {at}: {detail}")]
    PermissionDenied { at: NetserverAt, detail: String },
    /// Another control connection holds the interface.
    #[error("the remote netserver at {at}: {detail}")]
    Busy { at: NetserverAt, detail: String },
    #[error("offload control with the netserver at {at}: {detail}")]
    Io { at: NetserverAt, detail: String },
}

/// The remote interface's offloads, with those its driver has fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteState {
    pub snapshot: OffloadSnapshot,
    /// Offloads the driver does not let change (`ethtool -k` "[fixed]").
    pub fixed: Vec<Offload>,
}

/// An open control connection for offload control.
pub struct RemoteOffloads {
    chan: Channel,
    at: NetserverAt,
    interface: Option<String>,
}

impl RemoteOffloads {
    /// Connect to the netserver at `host`, `port`.
    pub fn connect(host: &str, port: u16) -> Result<Self, RemoteOffloadError> {
        let options = GlobalOptions {
            host: host.to_string(),
            port: port.to_string(),
            ..GlobalOptions::default()
        };
        RemoteOffloads::connect_with(&options)
    }

    /// Connect as netperf would with these global options (`-H`, `-p`,
    /// `-4`/`-6`, `-L`, `-Z passphrase`).
    pub fn connect_with(options: &GlobalOptions) -> Result<Self, RemoteOffloadError> {
        let at = NetserverAt::new(&options.host, &options.port);
        let chan = establish_within(options, CONNECT_WAIT).map_err(|e| {
            let detail = match e {
                ClientError::NoServer(_, errno) => format!(
                    "cannot connect to port {}: {}",
                    options.port,
                    std::io::Error::from_raw_os_error(errno)
                ),
                other => other.to_string(),
            };
            RemoteOffloadError::Io {
                at: at.clone(),
                detail: first_line(&detail),
            }
        })?;
        Ok(RemoteOffloads::from_channel(chan, at))
    }

    /// Use a control connection that is already open to the netserver `at`.
    pub fn from_channel(chan: Channel, at: NetserverAt) -> Self {
        RemoteOffloads {
            chan,
            at,
            interface: None,
        }
    }

    /// Ask about this netserver interface rather than the one that carries
    /// our traffic (None: that one again).
    pub fn set_interface(&mut self, interface: Option<&str>) {
        self.interface = interface.map(str::to_string);
    }

    /// The remote interface's offloads and MTU; always allowed.
    pub fn read(&mut self) -> Result<OffloadSnapshot, RemoteOffloadError> {
        Ok(self.state()?.snapshot)
    }

    /// `read`, with the offloads the remote driver has fixed.
    pub fn state(&mut self) -> Result<RemoteState, RemoteOffloadError> {
        self.ask(OffloadOp::Read, OffloadBits::default())
    }

    /// Turn remote offloads on or off; the state read back after.
    pub fn set(
        &mut self,
        wanted: &[(Offload, bool)],
    ) -> Result<OffloadSnapshot, RemoteOffloadError> {
        if wanted.is_empty() {
            return self.read();
        }
        Ok(self
            .ask(OffloadOp::Set, OffloadBits::from_pairs(wanted))?
            .snapshot)
    }

    /// Put back everything this connection changed (netserver also does
    /// when the connection closes); the state read back after.
    pub fn restore(&mut self) -> Result<OffloadSnapshot, RemoteOffloadError> {
        Ok(self
            .ask(OffloadOp::Restore, OffloadBits::default())?
            .snapshot)
    }

    fn ask(
        &mut self,
        op: OffloadOp,
        changes: OffloadBits,
    ) -> Result<RemoteState, RemoteOffloadError> {
        let request = OffloadRequest {
            op,
            interface: self.interface.clone(),
            changes,
        };
        let io = |detail: String| RemoteOffloadError::Io {
            at: self.at.clone(),
            detail,
        };
        self.chan
            .send(&request.encode())
            .map_err(|e| io(e.to_string()))?;
        let answer = self.chan.recv(ANSWER_WAIT).map_err(|e| match e {
            // A stock netserver answers; one that closes may be an old
            // netperf-ng or a netserver that refused our passphrase.
            ChannelError::Closed => {
                io("netserver closed the control connection without answering".into())
            }
            other => io(other.to_string()),
        })?;
        self.interpret(&answer)
    }

    fn interpret(&self, answer: &Message) -> Result<RemoteState, RemoteOffloadError> {
        let at = self.at.clone();
        let Some(response) = OffloadResponse::decode(answer) else {
            if answer.kind() != kind::NG_OFFLOADS_RESPONSE
                && answer.serv_errno() == UNKNOWN_REQUEST_ERRNO
            {
                return Err(RemoteOffloadError::NotNetperfNg { at });
            }
            return Err(RemoteOffloadError::Io {
                at,
                detail: format!(
                    "unexpected answer (type {}, errno {}) to an offload request",
                    answer.kind(),
                    answer.serv_errno()
                ),
            });
        };
        let detail = response.text.clone();
        match response.status {
            OffloadStatus::Ok => Ok(state_of(&response)),
            OffloadStatus::NotAllowed => Err(RemoteOffloadError::NotAllowed {
                at,
                interface: response.interface.clone(),
                detail,
            }),
            OffloadStatus::Refused => match response.refused {
                Some((offload, wanted)) => Err(RemoteOffloadError::Refused {
                    at,
                    offload,
                    wanted,
                    detail,
                }),
                None => Err(RemoteOffloadError::Io { at, detail }),
            },
            OffloadStatus::NoSuchInterface => {
                Err(RemoteOffloadError::NoSuchInterface { at, detail })
            }
            OffloadStatus::PermissionDenied => {
                Err(RemoteOffloadError::PermissionDenied { at, detail })
            }
            OffloadStatus::Busy => Err(RemoteOffloadError::Busy { at, detail }),
            OffloadStatus::BadRequest
            | OffloadStatus::KernelUnsupported
            | OffloadStatus::Failed => Err(RemoteOffloadError::Io { at, detail }),
        }
    }
}

fn state_of(response: &OffloadResponse) -> RemoteState {
    let features = Offload::ALL
        .iter()
        .map(|o| {
            (
                o.name().to_string(),
                response.active & (1 << o.index()) != 0,
            )
        })
        .collect();
    RemoteState {
        snapshot: OffloadSnapshot {
            interface: response.interface.clone(),
            features,
            mtu: (response.mtu != 0).then_some(response.mtu),
        },
        fixed: offloads_in(response.fixed),
    }
}

fn of_interface(interface: &str) -> String {
    match interface {
        "" => String::new(),
        name => format!(" of {name}"),
    }
}

fn rule_or_opt_in(detail: &str) -> &str {
    match detail {
        "" => "its operator must start it with --allow-offload-changes",
        rule => rule,
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_one_line_naming_the_host_and_port() {
        let at = || NetserverAt::new("198.18.200.2", 12866);
        let errors = [
            RemoteOffloadError::NotNetperfNg { at: at() },
            RemoteOffloadError::NotAllowed {
                at: at(),
                interface: "vb".into(),
                detail: "offload changes are off".into(),
            },
            RemoteOffloadError::Refused {
                at: at(),
                offload: Offload::Lro,
                wanted: true,
                detail: "cannot turn lro on on vb".into(),
            },
            RemoteOffloadError::NoSuchInterface {
                at: at(),
                detail: "x".into(),
            },
            RemoteOffloadError::PermissionDenied {
                at: at(),
                detail: "x".into(),
            },
            RemoteOffloadError::Busy {
                at: at(),
                detail: "x".into(),
            },
            RemoteOffloadError::Io {
                at: at(),
                detail: "x".into(),
            },
        ];
        for e in errors {
            let text = e.to_string();
            assert!(
                text.contains("netserver at 198.18.200.2 port 12866") && !text.contains('\n'),
                "{text}"
            );
        }
    }

    #[test]
    fn a_refusal_names_the_interface_and_the_rule() {
        let e = |interface: &str, detail: &str| RemoteOffloadError::NotAllowed {
            at: NetserverAt::new("lg1", 12865),
            interface: interface.into(),
            detail: detail.into(),
        };
        assert_eq!(
            e(
                "eth1",
                "not the interface toward the client 10.0.0.1 (eth0)"
            )
            .to_string(),
            "the remote netserver at lg1 port 12865 refused to change the offloads of eth1: \
             not the interface toward the client 10.0.0.1 (eth0)"
        );
        // An older netserver says neither.
        assert_eq!(
            e("", "").to_string(),
            "the remote netserver at lg1 port 12865 refused to change the offloads: \
             its operator must start it with --allow-offload-changes"
        );
    }

    #[test]
    fn a_response_becomes_a_snapshot() {
        let response = OffloadResponse {
            status: OffloadStatus::Ok,
            interface: "vb".into(),
            active: 0b0011,
            fixed: 0b1000,
            mtu: 1500,
            refused: None,
            text: String::new(),
        };
        let state = state_of(&response);
        assert_eq!(state.snapshot.interface, "vb");
        assert_eq!(state.snapshot.mtu, Some(1500));
        assert_eq!(state.fixed, vec![Offload::Lro]);
        let on: Vec<_> = state
            .snapshot
            .features
            .iter()
            .filter(|(_, on)| **on)
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(on, ["gso", "tso"]);
    }
}
