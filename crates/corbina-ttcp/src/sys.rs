//! Process figures for the CPU and memory columns: `getrusage` for this process and its
//! waited-for children (microsecond resolution), `/proc/<pid>/stat` utime+stime for a
//! running child (clock-tick resolution, 10 ms on Linux), `/proc/<pid>/status` VmRSS.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::sys::resource::{getrusage, UsageWho};
use nix::unistd::Pid;

fn usage_seconds(who: UsageWho) -> f64 {
    match getrusage(who) {
        Ok(u) => {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 * 1e-6;
            t(u.user_time()) + t(u.system_time())
        }
        Err(_) => 0.0,
    }
}

/// User + system CPU seconds of this process (all threads) so far.
pub fn self_cpu_seconds() -> f64 {
    usage_seconds(UsageWho::RUSAGE_SELF)
}

/// User + system CPU seconds of every child this process has waited for.
pub fn children_cpu_seconds() -> f64 {
    usage_seconds(UsageWho::RUSAGE_CHILDREN)
}

fn clock_ticks() -> f64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map(|t| t as f64)
        .unwrap_or(100.0)
}

/// User + system CPU seconds of a running process, from `/proc/<pid>/stat` (fields 14 and
/// 15, in clock ticks). `None` if the process is gone or the file unreadable.
pub fn proc_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_cpu_ticks(&stat).map(|t| t as f64 / clock_ticks())
}

/// utime + stime in ticks from the text of `/proc/<pid>/stat`.
pub fn parse_stat_cpu_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) may contain spaces and parentheses: start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): utime is field 14, stime field 15.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Resident set size of a process in bytes, from `/proc/<pid>/status` VmRSS.
pub fn proc_rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Threads of a process, from `/proc/<pid>/status`.
pub fn proc_threads(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Threads:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The CPUs this thread may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    let Ok(set) = sched_getaffinity(Pid::from_raw(0)) else {
        return Vec::new();
    };
    (0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect()
}

fn cpu_set(cpus: &[usize]) -> Result<CpuSet, String> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(|e| format!("CPU {c}: {e}"))?;
    }
    Ok(set)
}

/// Runs `f` with this thread's affinity set to `cpus` (all of `allowed` when `None`), then
/// restores it: a process spawned by `f` inherits the mask (affinity is per thread and
/// copied at fork), so a client is placed from its first instruction.
pub fn with_affinity<T>(cpus: Option<&[usize]>, f: impl FnOnce() -> T) -> Result<T, String> {
    let Some(cpus) = cpus else { return Ok(f()) };
    let me = Pid::from_raw(0);
    let old = sched_getaffinity(me).map_err(|e| format!("sched_getaffinity: {e}"))?;
    sched_setaffinity(me, &cpu_set(cpus)?).map_err(|e| format!("sched_setaffinity: {e}"))?;
    let out = f();
    sched_setaffinity(me, &old).map_err(|e| format!("sched_setaffinity: {e}"))?;
    Ok(out)
}

/// Sets the affinity of every thread of process `pid` (`/proc/<pid>/task`) to `cpus`;
/// threads it creates later inherit their creator's mask. Returns the threads moved.
pub fn pin_process(pid: u32, cpus: &[usize]) -> Result<usize, String> {
    let set = cpu_set(cpus)?;
    let tasks =
        std::fs::read_dir(format!("/proc/{pid}/task")).map_err(|e| format!("{pid}: {e}"))?;
    let mut n = 0;
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        // A thread may exit meanwhile: not an error.
        if sched_setaffinity(Pid::from_raw(tid), &set).is_ok() {
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_line_with_spaces_in_the_name() {
        let stat = "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 \
                    3 0 100 1000 50";
        assert_eq!(parse_stat_cpu_ticks(stat), Some(287));
        assert_eq!(parse_stat_cpu_ticks("garbage"), None);
    }

    #[test]
    fn own_figures_are_readable() {
        let pid = std::process::id();
        assert!(proc_rss_bytes(pid).unwrap() > 0);
        assert!(proc_threads(pid).unwrap() >= 1);
        assert!(proc_cpu_seconds(pid).is_some());
        assert!(self_cpu_seconds() >= 0.0);
        assert!(children_cpu_seconds() >= 0.0);
    }

    #[test]
    fn affinity_is_set_and_restored() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let inside = with_affinity(Some(&cpus[..1]), allowed_cpus).unwrap();
        assert_eq!(inside, cpus[..1]);
        assert_eq!(allowed_cpus(), cpus);
        // A child spawned inside inherits the mask.
        let child = with_affinity(Some(&cpus[..1]), || {
            std::process::Command::new("sleep")
                .arg("5")
                .spawn()
                .unwrap()
        })
        .unwrap();
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .unwrap();
        assert_eq!(
            line.split_whitespace().nth(1),
            Some(cpus[0].to_string().as_str())
        );
        // And can be moved back to every CPU.
        assert!(pin_process(child.id(), &cpus).unwrap() >= 1);
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
    }
}
