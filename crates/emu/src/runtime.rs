//! The runtime configuration the Python backend writes for the engine (JSON): the resolved
//! experiment plus the hosts' TUN file descriptors and addresses.

use serde::Deserialize;

/// The scenario as the engine reads it: the simulator's (`netmodel::scenario`), endpoint
/// settings left to the kernel (sysctls and routes, set by the Python driver).
pub type Experiment = netmodel::scenario::Scenario;

/// `--pcap`: where and how much of each packet the engine captures (crate::capture).
#[derive(Clone, Debug, Deserialize)]
pub struct CaptureConfig {
    pub dir: String,
    /// Bytes kept per packet; 0 = whole packets.
    #[serde(default)]
    pub snaplen: u32,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Host {
    pub name: String,
    /// TUN file descriptor inherited from the driver (the interface lives in the host's
    /// namespace; the fd works from the root namespace).
    pub fd: i32,
    /// IPv4 address, dotted quad.
    pub addr: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Runtime {
    pub run_id: String,
    pub experiment: Experiment,
    pub hosts: Vec<Host>,
    /// Flow `f`'s receiver listens on `port_base + f`; the engine maps packets to flows by it
    /// (falling back to the host pair for command schemes with ports of their own).
    pub port_base: u16,
    /// CPU the engine thread is pinned to (None: no pinning).
    #[serde(default)]
    pub engine_cpu: Option<usize>,
    /// Wake-up this long before a deadline and spin the rest (ns).
    #[serde(default = "default_spin")]
    pub spin_ns: u64,
    /// Nice value of the engine (default -20).
    #[serde(default = "default_nice")]
    pub engine_nice: i32,
    /// EEVDF time slice requested for the engine (ns; 0 = kernel default).
    #[serde(default = "default_slice")]
    pub engine_slice_ns: u64,
    /// Record the (intended, actual) release time of every packet (release table).
    #[serde(default = "yes")]
    pub record_release: bool,
    /// Print `progress t_ns=T bytes=B0,B1,...` on stdout every this many ns of experiment
    /// time (per-flow data bytes released to the receivers so far; 0 = never).
    #[serde(default)]
    pub progress_ns: u64,
    pub out_dir: String,
    /// The TUN fds were opened with `IFF_VNET_HDR` and checksum/TCPv4 segmentation offloads
    /// (crate::vnet): every read and write carries a `virtio_net_hdr`.
    #[serde(default)]
    pub tun_vnet: bool,
    /// With `tun_vnet`: a late run of one flow's segments may be written as one GSO packet.
    #[serde(default)]
    pub tun_join: bool,
    /// How late (ns) the first of a run must be for it to be joined (default 5 µs; the tests
    /// set 0 to make joins happen).
    #[serde(default = "default_join_late")]
    pub join_late_ns: u64,
    /// Write pcapng captures (None: no capture).
    #[serde(default)]
    pub capture: Option<CaptureConfig>,
}

fn default_spin() -> u64 {
    50_000
}

fn default_join_late() -> u64 {
    5_000
}

fn default_nice() -> i32 {
    -20
}

fn default_slice() -> u64 {
    100_000
}

fn yes() -> bool {
    true
}

pub fn parse_addr(s: &str) -> Option<u32> {
    let ip: std::net::Ipv4Addr = s.parse().ok()?;
    Some(u32::from(ip))
}
