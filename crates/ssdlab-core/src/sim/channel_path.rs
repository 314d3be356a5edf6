//! The channel's turn under `flash.channel_arbitration = "data-out-first"` (MQSim's ONFI PHY;
//! the rules are in `flash/channel.rs`): each time a channel frees, waiting read data goes out
//! first; only an idle channel with no data waiting offers a command, to its chips in round
//! robin, and stops at the first chip that takes one. Under `in-order` (the default) each die
//! starts its next batch as soon as it is idle and takes the channel when it is next free.

use super::{Event, Simulation};
use crate::ftl::transaction::Class;

impl Simulation {
    /// Serves the dies that the last event touched.
    pub(super) fn service_touched_dies(&mut self) {
        if self.backend.arbiter.is_none() {
            while let Some(die) = self.touched_dies.pop() {
                self.service_die(die);
            }
            return;
        }
        let g = &self.ftl.geometry;
        let dies_per_channel = g.dies_per_chip * g.chips_per_channel;
        while !self.touched_dies.is_empty() {
            // Their channels in ascending order, as MQSim's scheduler walks them.
            let mut channels = std::mem::take(&mut self.touched_channels);
            channels.clear();
            channels.extend(self.touched_dies.drain(..).map(|die| die / dies_per_channel));
            channels.sort_unstable();
            channels.dedup();
            for &channel in &channels {
                self.offer_command(channel as usize);
            }
            self.touched_channels = channels;
        }
    }

    /// An idle channel with no read data waiting offers a command to its chips, starting with
    /// the one whose turn it is, until one takes it. Chips left waiting are offered again when
    /// the channel frees.
    fn offer_command(&mut self, channel: usize) {
        let Some(arbiter) = &self.backend.arbiter else { return };
        if self.backend.channel_free_at[channel] > self.now() || arbiter.has_waiting_data(channel) {
            return;
        }
        for _ in 0..self.ftl.geometry.chips_per_channel {
            let chip = self.backend.arbiter.as_mut().expect("arbitrated channel").take_turn(channel);
            if let Some(die) = self.die_to_serve(chip) {
                self.service_die(die);
                if self.backend.dies[die as usize].busy {
                    return;
                }
            }
        }
    }

    /// A read finished sensing: whether its data may go out now (the channel is free and no
    /// other data waits); otherwise it waits its turn.
    pub(super) fn data_out_or_wait(&mut self, die: u32, class: Class) -> bool {
        if self.backend.arbiter.is_none() {
            return true;
        }
        let channel = self.channel_of_die(die);
        let needs_channel = !(self.backend.copyback && class == Class::GcRead);
        let busy = self.backend.channel_free_at[channel] > self.now();
        match &mut self.backend.arbiter {
            Some(arbiter) if needs_channel && (busy || arbiter.has_waiting_data(channel)) => {
                arbiter.wait_for_data_out(channel, class, die);
                false
            }
            _ => true,
        }
    }

    /// Under arbitration, the channel's turn comes again when the use just begun ends: the event
    /// is scheduled now, as MQSim registers the end of each transfer when it starts it, so that
    /// events falling at the same instant keep MQSim's order.
    pub(super) fn note_channel_use(&mut self, channel: usize) {
        if self.backend.arbiter.is_some() {
            let free_at = self.backend.channel_free_at[channel];
            if free_at > self.now() {
                self.queue.schedule(free_at, Event::ChannelFree { channel: channel as u32 });
            }
        }
    }

    /// The channel has finished a command or a data out: waiting data first, then a command.
    pub(super) fn on_channel_free(&mut self, channel: u32) {
        let channel = channel as usize;
        if self.backend.channel_free_at[channel] > self.now() {
            // Taken again since: that use's own end comes later.
            return;
        }
        let arbiter = self.backend.arbiter.as_mut().expect("arbitrated channel");
        match arbiter.next_data_out(channel) {
            Some(die) => self.send_data_out(die),
            None => self.offer_command(channel),
        }
    }
}
