//! The interleaved A/B each benchmark runs when `RUTTER_BENCH_BASE` names a base
//! ([`super::base`]): the builds to run (this one, then the base), the base's own copy of a
//! vault, rounds that run every build once with the order alternating from round to round,
//! each build's figures (wall time, CPU time of the child, peak memory), and the table of the
//! change from the base to this build.
//!
//! Without the variable there is one build, this one, and a benchmark's output is as it was.

use super::{canonical, flush_disks, sync_tree, Env, Measured, Prepared, Process, Stats, Usage};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// The builds a benchmark runs: this one (index [`THIS`]) and, with `RUTTER_BENCH_BASE`, the
/// base (index [`BASE`]).
pub struct Builds {
    bins: Vec<PathBuf>,
}

/// The index of this build among [`Builds`].
pub const THIS: usize = 0;
/// The index of the base among [`Builds`], when there is one.
pub const BASE: usize = 1;

impl Builds {
    /// This build, and the base `RUTTER_BENCH_BASE` names (built once when it is a revision).
    pub fn from_env(env: &Env) -> Builds {
        Builds {
            bins: super::base::builds(&env.root),
        }
    }

    /// 1, or 2 with a base.
    pub fn len(&self) -> usize {
        self.bins.len()
    }

    /// The binary of build `b`.
    pub fn bin(&self, b: usize) -> &Path {
        &self.bins[b]
    }

    /// The base's binary, if any.
    pub fn base(&self) -> Option<&Path> {
        self.bins.get(BASE).map(PathBuf::as_path)
    }

    /// What the progress lines call build `b`: `this build` or `base`.
    pub fn name(&self, b: usize) -> &'static str {
        match b {
            THIS => "this build",
            _ => "base",
        }
    }

    /// The prefix of build `b`'s progress lines: `this build: ` or `base: ` with a base, and
    /// nothing without one (the lines are as they were).
    pub fn who(&self, b: usize) -> String {
        match self.len() {
            1 => String::new(),
            _ => format!("{}: ", self.name(b)),
        }
    }

    /// `label` as build `b`'s row calls it: as is for this build, marked for the base.
    pub fn label(&self, b: usize, label: &str) -> String {
        match b {
            THIS => label.to_owned(),
            _ => format!("{label} — base"),
        }
    }

    /// The vault each build runs on: `this` for this build; for the base, the one `copy` makes
    /// (the base never runs on the vault this build is timed on: a read may write caches).
    pub fn vaults(&self, this: PathBuf, copy: impl FnOnce() -> PathBuf) -> Vec<PathBuf> {
        let base = (self.len() > 1).then(copy);
        std::iter::once(this).chain(base).collect()
    }

    /// `bin --vault V ARGS` for build `b` in the hermetic environment.
    pub fn command(
        &self,
        env: &Env,
        b: usize,
        vault: &Path,
        args: &[&str],
    ) -> std::process::Command {
        let mut cmd = env.command(super::utf8(self.bin(b)));
        cmd.args(["--vault", super::utf8(vault)]).args(args);
        cmd
    }
}

/// A hermetic environment for the base, with a HOME of its own (`<root>/home-base`): what the
/// base registers there (a client's hook, naming its vault) never meets this build's.
pub fn base_env(env: &Env) -> Env {
    let home = env.root.join("home-base");
    std::fs::create_dir_all(home.join(".config")).expect("create the base's HOME");
    Env {
        root: env.root.clone(),
        home,
        end_date: env.end_date.clone(),
    }
}

/// `warmup + runs` rounds of `once(b, i)` (build `b`, round `i`, warm-ups included), each round
/// running every build once, the first build of a round alternating from round to round so
/// neither always runs on a warmer cache. Returns each build's results of the measured rounds.
pub fn interleaved<T>(
    builds: usize,
    warmup: usize,
    runs: usize,
    mut once: impl FnMut(usize, usize) -> T,
) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = (0..builds).map(|_| Vec::with_capacity(runs)).collect();
    for i in 0..warmup + runs {
        for k in 0..builds {
            let b = (k + i) % builds;
            let r = once(b, i);
            if i >= warmup {
                out[b].push(r);
            }
        }
    }
    out
}

/// `<dir>/<name>`, made again a copy of the prepared vault as `init` left it (only what differs
/// is copied), then `sync`: the base's own vault.
pub fn copy_of(p: &Prepared, name: &str) -> PathBuf {
    let copy = p.dir.join(name);
    sync_tree(&p.pristine, &copy);
    flush_disks();
    canonical(&copy)
}

/// One measured run: wall time and CPU time (user + system of the child) in ms, peak resident
/// memory in MiB.
#[derive(Clone, Copy, Default)]
pub struct Sample {
    pub wall_ms: f64,
    pub cpu_ms: f64,
    pub peak_mib: f64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl From<&Process> for Sample {
    fn from(p: &Process) -> Sample {
        Sample {
            wall_ms: ms(p.wall),
            cpu_ms: ms(p.cpu),
            peak_mib: p.peak_mib,
        }
    }
}

impl From<&Measured> for Sample {
    fn from(m: &Measured) -> Sample {
        Sample {
            wall_ms: ms(m.took),
            cpu_ms: ms(m.cpu),
            peak_mib: m.peak_kib as f64 / 1024.0,
        }
    }
}

/// The row of `samples`: wall-time median, p95 and min against `target`, with the median CPU
/// time and the largest peak.
pub fn stats(label: &str, samples: &[Sample], target: Option<f64>) -> Stats {
    Stats::of(label, samples.iter().map(|s| s.wall_ms).collect(), target).with_usage(usage(samples))
}

/// The median CPU time and the largest peak of `samples`.
pub fn usage(samples: &[Sample]) -> Usage {
    Usage::of_runs(
        samples.iter().map(|s| s.cpu_ms).collect(),
        samples.iter().map(|s| s.peak_mib),
    )
}

/// Each build's row of one case from its samples (this build's first), the base's marked.
pub fn rows(
    builds: &Builds,
    label: &str,
    samples: &[Vec<Sample>],
    target: Option<f64>,
) -> Vec<Stats> {
    samples
        .iter()
        .enumerate()
        .map(|(b, s)| stats(&builds.label(b, label), s, target))
        .collect()
}

/// A case's figures for the change table: median wall ms, median CPU ms, largest peak MiB.
#[derive(Clone, Copy, Default)]
pub struct Figures {
    pub ms: f64,
    pub cpu_ms: f64,
    pub peak_mib: f64,
}

impl Figures {
    /// From a row's wall-time median and its usage (zero CPU and peak without one).
    pub fn of(stats: &Stats) -> Figures {
        let u = stats.usage.unwrap_or(Usage {
            cpu_ms: 0.0,
            peak_mib: 0.0,
        });
        Figures {
            ms: stats.median,
            cpu_ms: u.cpu_ms,
            peak_mib: u.peak_mib,
        }
    }
}

/// One line of the change table: a case on the base and on this build.
pub struct Change {
    pub label: String,
    pub base: Figures,
    pub this: Figures,
}

/// The changes of `rows`: each base row (labelled as [`Builds::label`] labels the base's) against
/// the row before it, this build's; rows without a base beside them (a floor) are left out.
pub fn changes(builds: &Builds, rows: &[&Stats]) -> Vec<Change> {
    changes_of(builds, rows, |r| (r.label.as_str(), Figures::of(r)))
}

/// [`changes`] for rows of any type, given each row's label and figures.
pub fn changes_of<R>(
    builds: &Builds,
    rows: &[R],
    figures: impl Fn(&R) -> (&str, Figures),
) -> Vec<Change> {
    if builds.len() < 2 {
        return Vec::new();
    }
    rows.windows(2)
        .filter_map(|pair| {
            let ((this_label, this), (base_label, base)) = (figures(&pair[0]), figures(&pair[1]));
            (base_label == builds.label(BASE, this_label)).then(|| Change {
                label: this_label.to_owned(),
                base,
                this,
            })
        })
        .collect()
}

/// The A/B table: each case's medians on the base and on this build, and the change in wall
/// time (%), CPU time (this / base) and peak memory (MiB); empty without a base or a change.
pub fn change_table(builds: &Builds, changes: &[Change]) -> String {
    let Some(base) = builds.base() else {
        return String::new();
    };
    if changes.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\nInterleaved A/B against `{}` (base), run by run, the order alternating; medians, \
         wall ms (CPU ms, peak MiB):\n\n\
         | case | base | this | wall | CPU this / base | peak Δ MiB |\n\
         |---|---:|---:|---:|---:|---:|\n",
        base.display()
    );
    for c in changes {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:+.0} % | ×{:.2} | {:+.1} |",
            c.label,
            cell(&c.base),
            cell(&c.this),
            (c.this.ms / c.base.ms - 1.0) * 100.0,
            c.this.cpu_ms / c.base.cpu_ms,
            c.this.peak_mib - c.base.peak_mib
        );
    }
    s
}

fn cell(f: &Figures) -> String {
    format!("{:.2} ({:.2}, {:.1})", f.ms, f.cpu_ms, f.peak_mib)
}

/// Panics with `what`'s output unless it exited 0.
pub fn expect_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}); stdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
