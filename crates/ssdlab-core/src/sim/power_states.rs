//! NVMe autonomous power state transitions (`[power.apst]`, see `config::apst`): when the first
//! command after an idle period is to be fetched, the device works out which non-operational
//! states it went through while idle, and fetching waits until the deepest one has been left
//! (its entry finished, then its exit latency). The low-power intervals are kept for the energy
//! model, which charges them at the states' power instead of the device's static power.

use serde::{Deserialize, Serialize};

use super::{Event, Simulation};
use crate::config::apst::ApstConfig;
use crate::time::{ps_to_seconds, SimTime};

struct State {
    name: String,
    watts: f64,
    after_ps: SimTime,
    entry_ps: SimTime,
    exit_ps: SimTime,
}

pub(super) struct PowerStates {
    states: Vec<State>,
    /// Fetching waits until then: the device is returning to its operational state.
    waking_until: Option<SimTime>,
    /// (start, end, state): time spent in each non-operational state, its exit included.
    pub intervals: Vec<(SimTime, SimTime, u8)>,
    entries: Vec<u64>,
    wakeups: u64,
    exit_wait_ps: u64,
    max_exit_wait_ps: u64,
}

impl PowerStates {
    pub fn new(config: &ApstConfig) -> Option<Self> {
        config.enabled.then(|| Self {
            states: config
                .states
                .iter()
                .map(|s| State {
                    name: s.name.clone(),
                    watts: s.watts,
                    after_ps: s.after_idle.value,
                    entry_ps: s.entry_latency.value,
                    exit_ps: s.exit_latency.value,
                })
                .collect(),
            waking_until: None,
            intervals: Vec::new(),
            entries: vec![0; config.states.len()],
            wakeups: 0,
            exit_wait_ps: 0,
            max_exit_wait_ps: 0,
        })
    }

    /// A command is to be fetched at `now` by a device idle since `idle_since`: records the
    /// states it went through and returns when it is back in its operational state.
    fn wake(&mut self, idle_since: SimTime, now: SimTime) -> SimTime {
        let idle = now - idle_since;
        let Some(deepest) = self.states.iter().rposition(|s| s.after_ps <= idle) else { return now };
        for j in 0..=deepest {
            let start = idle_since + self.states[j].after_ps;
            let end = if j < deepest { idle_since + self.states[j + 1].after_ps } else { now };
            self.intervals.push((start, end, j as u8));
            self.entries[j] += 1;
        }
        let s = &self.states[deepest];
        // An entry still under way finishes before the exit starts.
        let ready = now.max(idle_since + s.after_ps + s.entry_ps) + s.exit_ps;
        self.intervals.last_mut().expect("pushed above").1 = ready;
        self.wakeups += 1;
        self.exit_wait_ps += ready - now;
        self.max_exit_wait_ps = self.max_exit_wait_ps.max(ready - now);
        ready
    }

    /// Seconds spent in each state (its entry and exit included).
    pub fn residency_seconds(&self) -> Vec<f64> {
        let mut r = vec![0.0; self.states.len()];
        for &(start, end, k) in &self.intervals {
            r[k as usize] += ps_to_seconds(end - start);
        }
        r
    }

    pub fn watts(&self, state: u8) -> f64 {
        self.states[state as usize].watts
    }

    pub fn summary(&self, run_ps: SimTime) -> PowerStatesSummary {
        let residency = self.residency_seconds();
        PowerStatesSummary {
            states: self
                .states
                .iter()
                .zip(&residency)
                .zip(&self.entries)
                .map(|((s, &r), &entries)| PowerStateSummary {
                    name: s.name.clone(),
                    watts: s.watts,
                    entries,
                    residency_seconds: r,
                })
                .collect(),
            wakeups: self.wakeups,
            exit_wait_us_mean: if self.wakeups == 0 {
                0.0
            } else {
                self.exit_wait_ps as f64 / self.wakeups as f64 / 1e6
            },
            exit_wait_us_max: self.max_exit_wait_ps as f64 / 1e6,
            low_power_fraction: if run_ps == 0 { 0.0 } else { residency.iter().sum::<f64>() / ps_to_seconds(run_ps) },
        }
    }
}

/// results.json `power_states` (only with `power.apst.enabled`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PowerStatesSummary {
    pub states: Vec<PowerStateSummary>,
    /// Commands that found the device in a non-operational state and waited for it to wake.
    pub wakeups: u64,
    /// Mean and longest wait of those commands for the exit (and any unfinished entry).
    pub exit_wait_us_mean: f64,
    pub exit_wait_us_max: f64,
    /// Fraction of the run spent in non-operational states.
    pub low_power_fraction: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PowerStateSummary {
    pub name: String,
    pub watts: f64,
    /// Times the device entered the state.
    pub entries: u64,
    pub residency_seconds: f64,
}

impl Simulation {
    /// Whether fetching must wait for the device to leave a low-power state. Called when a
    /// command is to enter an empty device; the first such call after idle works out the wait
    /// and schedules the retry.
    pub(super) fn waking_from_idle(&mut self) -> bool {
        let now = self.now();
        let idle_since = self.gap_start;
        let Some(apst) = self.power_states.as_mut() else { return false };
        match apst.waking_until {
            Some(t) if now < t => true,
            Some(_) => {
                apst.waking_until = None;
                false
            }
            None => {
                let ready = apst.wake(idle_since, now);
                if ready > now {
                    apst.waking_until = Some(ready);
                    self.queue.schedule(ready, Event::PowerStateExit);
                }
                ready > now
            }
        }
    }
}
