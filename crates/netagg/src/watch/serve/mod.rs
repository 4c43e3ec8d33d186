//! The HTTP side of `netagg watch --listen` (a placeholder until it is
//! built: `--listen` is refused).

/// The HTTP server.
pub struct Server {
    addr: std::net::SocketAddr,
}

impl Server {
    /// The address it listens on.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.addr
    }
}

/// Binds `addr` and serves `shared` on its own threads.
pub fn start(addr: &str, shared: super::state::Shared) -> Result<Server, String> {
    let _ = (addr, shared);
    Err("--listen: not built yet".into())
}
