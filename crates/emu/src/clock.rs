//! Wall-clock helpers. Every process of an emulation run (engine, agents, the Python driver)
//! uses CLOCK_MONOTONIC, which network namespaces share, so all records have one clock.

/// CLOCK_MONOTONIC in nanoseconds.
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME in nanoseconds since the Unix epoch (capture timestamps).
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until the absolute CLOCK_MONOTONIC time `t_ns` (returns early on a signal).
pub fn sleep_until(t_ns: u64) {
    let ts = libc::timespec { tv_sec: (t_ns / 1_000_000_000) as _, tv_nsec: (t_ns % 1_000_000_000) as _ };
    // SAFETY: plain syscall with a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut());
    }
}

/// Sleep until shortly before `t_ns`, then spin until it (precise to about a microsecond when
/// the CPU is not stolen).
pub fn sleep_spin_until(t_ns: u64, spin_ns: u64) {
    if t_ns > spin_ns {
        let now = mono_ns();
        if t_ns - spin_ns > now {
            sleep_until(t_ns - spin_ns);
        }
    }
    while mono_ns() < t_ns {
        std::hint::spin_loop();
    }
}

/// Pin the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity(0) applies to the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Timer slack of the calling thread (default 50 µs; 1 ns makes sleeps end on time).
pub fn set_timer_slack(ns: u64) {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

/// Ask the kernel to send `sig` to this process when its parent dies (no orphans after a
/// SIGKILL of the driver).
pub fn die_with_parent(sig: i32) {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) };
}

/// CPU time (user + system) of the calling thread, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as in mono_ns.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Give the calling process its own scheduling autogroup (a new session) with the given nice
/// value and the same nice value itself. With CONFIG_SCHED_AUTOGROUP, CFS first shares a CPU
/// fairly between sessions, so a per-process nice alone loses to another session's busy
/// processes; a session of our own at nice -20 wins. Returns what was applied.
pub fn prioritise(nice: i32) -> (bool, bool) {
    // SAFETY: setsid/setpriority on the calling process.
    unsafe { libc::setsid() };
    let group = std::fs::write("/proc/self/autogroup", nice.to_string()).is_ok();
    let own = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } == 0;
    (group, own)
}

/// struct sched_attr (include/uapi/linux/sched/types.h, SCHED_ATTR_SIZE_VER1).
#[repr(C)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

/// Ask EEVDF for a short time slice (SCHED_OTHER's `sched_runtime`, Linux ≥ 6.12, clamped
/// to 0.1–100 ms) for the calling thread: a task with a shorter slice than the running one
/// preempts it on wake-up (PREEMPT_SHORT) instead of waiting for the other's slice (up to a
/// few ms, RUN_TO_PARITY) to end. Returns whether the kernel accepted it.
pub fn short_slice(nice: i32, slice_ns: u64) -> bool {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: libc::SCHED_OTHER as u32,
        sched_flags: 0,
        sched_nice: nice,
        sched_priority: 0,
        sched_runtime: slice_ns,
        sched_deadline: 0,
        sched_period: 0,
        sched_util_min: 0,
        sched_util_max: 0,
    };
    // SAFETY: sched_setattr(0 = calling thread, valid attr, flags 0).
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) == 0 }
}
