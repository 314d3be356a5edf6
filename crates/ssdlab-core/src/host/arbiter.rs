//! Submission queue arbitration: which flow's queue the device fetches its next command from
//! (NVMe 1.2, section 4.11). Round robin ignores priorities; weighted round robin serves URGENT
//! queues strictly first, then lets HIGH, MEDIUM and LOW fetch in proportion to their weights,
//! round robin among the queues of one class.

use crate::config::{Arbitration, HostConfig, Priority};

pub struct Arbiter {
    mode: Arbitration,
    flows: usize,
    next_flow: usize,
    /// Flows of each priority class, and the next one to try in each.
    classes: [Vec<usize>; 4],
    next_in_class: [usize; 4],
    /// Fetches left in this round for HIGH, MEDIUM, LOW (indices 1..=3).
    credits: [u32; 4],
    weights: [u32; 4],
}

impl Arbiter {
    pub fn new(host: &HostConfig, priorities: &[Priority]) -> Self {
        let mut classes: [Vec<usize>; 4] = Default::default();
        for (f, &p) in priorities.iter().enumerate() {
            classes[p as usize].push(f);
        }
        let w = host.wrr_weights;
        let weights = [0, w.high, w.medium, w.low];
        Self {
            mode: host.arbitration,
            flows: priorities.len(),
            next_flow: 0,
            classes,
            next_in_class: [0; 4],
            credits: weights,
            weights,
        }
    }

    /// The flow to fetch from next, among those `eligible` says have a command to give.
    pub fn pick(&mut self, eligible: impl Fn(usize) -> bool) -> Option<usize> {
        match self.mode {
            Arbitration::RoundRobin => {
                // Called for every fetch: wrap by comparison, not division.
                let wrap = |f: usize| if f + 1 == self.flows { 0 } else { f + 1 };
                let mut f = self.next_flow;
                for _ in 0..self.flows {
                    if eligible(f) {
                        self.next_flow = wrap(f);
                        return Some(f);
                    }
                    f = wrap(f);
                }
                None
            }
            Arbitration::WeightedRoundRobin => {
                if let Some(f) = self.pick_in_class(0, &eligible) {
                    return Some(f);
                }
                for _refill in 0..2 {
                    for class in 1..4 {
                        if self.credits[class] > 0 {
                            if let Some(f) = self.pick_in_class(class, &eligible) {
                                self.credits[class] -= 1;
                                return Some(f);
                            }
                        }
                    }
                    // Every class with work has spent its weight: a new round.
                    self.credits = self.weights;
                }
                None
            }
        }
    }

    fn pick_in_class(&mut self, class: usize, eligible: &impl Fn(usize) -> bool) -> Option<usize> {
        let members = &self.classes[class];
        let n = members.len();
        let k = (0..n).find(|&k| eligible(members[(self.next_in_class[class] + k) % n]))?;
        let i = (self.next_in_class[class] + k) % n;
        self.next_in_class[class] = (i + 1) % n;
        Some(members[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(mode: Arbitration) -> HostConfig {
        HostConfig { arbitration: mode, ..HostConfig::default() }
    }

    #[test]
    fn weighted_round_robin_fetches_in_proportion_to_the_weights() {
        let mut a =
            Arbiter::new(&host(Arbitration::WeightedRoundRobin), &[Priority::High, Priority::Medium, Priority::Low]);
        let picks: Vec<usize> = (0..14).map(|_| a.pick(|_| true).unwrap()).collect();
        let count = |f| picks.iter().filter(|&&p| p == f).count();
        // Weights 4 : 2 : 1 over two rounds.
        assert_eq!((count(0), count(1), count(2)), (8, 4, 2));
    }

    #[test]
    fn urgent_queues_go_first_and_idle_classes_give_way() {
        let mut a = Arbiter::new(&host(Arbitration::WeightedRoundRobin), &[Priority::Low, Priority::Urgent]);
        assert_eq!(a.pick(|_| true), Some(1));
        assert_eq!(a.pick(|f| f == 0), Some(0), "a lone low queue is still served");
        assert_eq!(a.pick(|_| false), None);
    }

    #[test]
    fn round_robin_ignores_priorities() {
        let mut a = Arbiter::new(&host(Arbitration::RoundRobin), &[Priority::Low, Priority::Urgent]);
        let picks: Vec<usize> = (0..4).map(|_| a.pick(|_| true).unwrap()).collect();
        assert_eq!(picks, vec![0, 1, 0, 1]);
    }
}
