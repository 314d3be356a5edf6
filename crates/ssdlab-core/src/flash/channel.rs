//! Who gets a busy channel next, under `flash.channel_arbitration = "data-out-first"` (MQSim's
//! ONFI NV-DDR2 PHY, `NVM_PHY_ONFI_NVDDR2` at 7ec40e3): a read whose data waits in its page
//! register takes the channel before any new command, translation reads first, then user reads,
//! then GC reads; a new command goes only to an idle channel with no data waiting, one chip at a
//! time in round robin. A chip that has sent its data out therefore stays idle while other
//! chips' data drains, which is why a saturated MQSim drive completes fewer reads than the
//! default `in-order` channel, where each command and data out takes the channel in the order it
//! asks for it (docs/fidelity.md).

use std::collections::VecDeque;

use crate::ftl::transaction::Class;

/// Waiting data outs and the round-robin turn of each channel.
pub struct ChannelArbiter {
    /// Per channel, dies whose read data waits for the channel: translation, user, GC reads.
    waiting: Vec<[VecDeque<u32>; 3]>,
    /// Per channel, the chip (numbered within the channel) offered the next command first.
    next_chip: Vec<u32>,
    chips_per_channel: u32,
}

impl ChannelArbiter {
    pub fn new(channels: u32, chips_per_channel: u32) -> Self {
        Self {
            waiting: (0..channels).map(|_| Default::default()).collect(),
            next_chip: vec![0; channels as usize],
            chips_per_channel,
        }
    }

    /// MQSim's order among waiting data outs: mapping reads, then user reads, then GC reads.
    fn rank(class: Class) -> usize {
        match class {
            Class::MappingRead => 0,
            Class::GcRead => 2,
            _ => 1,
        }
    }

    /// `die`'s read data waits for `channel`.
    pub fn wait_for_data_out(&mut self, channel: usize, class: Class, die: u32) {
        self.waiting[channel][Self::rank(class)].push_back(die);
    }

    /// The die whose data goes out next on `channel`, if any waits.
    pub fn next_data_out(&mut self, channel: usize) -> Option<u32> {
        self.waiting[channel].iter_mut().find_map(VecDeque::pop_front)
    }

    pub fn has_waiting_data(&self, channel: usize) -> bool {
        self.waiting[channel].iter().any(|q| !q.is_empty())
    }

    /// The chip of `channel` (a global chip id) whose turn it is to be offered a command; the
    /// turn passes to the next chip of the channel.
    #[inline]
    pub fn take_turn(&mut self, channel: usize) -> u32 {
        let n = self.chips_per_channel;
        let chip = self.next_chip[channel];
        self.next_chip[channel] = (chip + 1) % n;
        channel as u32 * n + chip
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translation_data_goes_out_before_user_and_gc_data() {
        let mut a = ChannelArbiter::new(2, 4);
        a.wait_for_data_out(1, Class::GcRead, 7);
        a.wait_for_data_out(1, Class::UserRead, 5);
        a.wait_for_data_out(1, Class::MappingRead, 6);
        a.wait_for_data_out(1, Class::UserRead, 4);
        assert!(a.has_waiting_data(1) && !a.has_waiting_data(0));
        let order: Vec<u32> = std::iter::from_fn(|| a.next_data_out(1)).collect();
        assert_eq!(order, [6, 5, 4, 7]);
        assert!(!a.has_waiting_data(1));
    }

    #[test]
    fn chips_are_offered_commands_in_round_robin() {
        let mut a = ChannelArbiter::new(2, 3);
        let turns: Vec<u32> = (0..4).map(|_| a.take_turn(1)).collect();
        assert_eq!(turns, [3, 4, 5, 3]);
        assert_eq!(a.take_turn(0), 0);
        assert_eq!(a.take_turn(1), 4);
    }
}
