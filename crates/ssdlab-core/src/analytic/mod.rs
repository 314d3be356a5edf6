//! The analytical model of SSD parallelism (Yoo et al., SIMULTECH 2014), used as a closed-form
//! check of the event engine and as a quick estimator.
//!
//! A page costs W_page = W_ch + W_reg + W_cell to write (R_* to read): the controller's channel
//! switching delay, the register (bus) transfer and the cell operation. With rho pages processed
//! in parallel per cycle and N pages in a request, the request takes
//! `t = X_ch (N - 1) + t_wait (ceil(N / rho) - 1) + X_page`, `t_wait = max(0, X_page - X_ch rho)`.

use crate::config::Config;
use crate::flash::timing::FlashTiming;
use crate::time::PS_PER_US;

/// The model's parameters in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageCosts {
    pub ch_us: f64,
    pub reg_us: f64,
    pub cell_us: f64,
}

impl PageCosts {
    pub fn page_us(&self) -> f64 {
        self.ch_us + self.reg_us + self.cell_us
    }
}

/// Time to serve one request of `pages` pages with `rho`-way parallelism.
pub fn request_time_us(costs: PageCosts, pages: u64, rho: u64) -> f64 {
    assert!(pages > 0 && rho > 0, "a request has at least one page and one parallel unit");
    let page = costs.page_us();
    let wait = (page - costs.ch_us * rho as f64).max(0.0);
    let cycles = pages.div_ceil(rho);
    costs.ch_us * (pages - 1) as f64 + wait * (cycles - 1) as f64 + page
}

/// IOPS of a queue-depth-1 stream of such requests.
pub fn qd1_iops(costs: PageCosts, pages: u64, rho: u64) -> f64 {
    1e6 / request_time_us(costs, pages, rho)
}

/// Read and write page costs of a configured device: the controller dispatch time is X_ch, the
/// bus transfer of a page (with its command cycles) is X_reg, the LSB cell latency is X_cell.
pub fn costs_from_config(config: &Config) -> (PageCosts, PageCosts) {
    let timing = FlashTiming::new(config);
    let us = |ps: u64| ps as f64 / PS_PER_US as f64;
    let read = PageCosts {
        ch_us: us(config.controller.dispatch_read.value),
        reg_us: us(timing.read_command_ps + timing.page_transfer_ps),
        cell_us: us(timing.read_ps(0)),
    };
    let write = PageCosts {
        ch_us: us(config.controller.dispatch_write.value),
        reg_us: us(timing.program_command_ps + timing.page_transfer_ps),
        cell_us: us(timing.program_ps(0)),
    };
    (read, write)
}

/// Pages the device works on at once: every plane of every die of every chip.
pub fn parallel_units(config: &Config) -> u64 {
    let f = &config.flash;
    // The planes of a die work in parallel only as one multi-plane command.
    let planes = if f.multi_plane { f.planes_per_die } else { 1 };
    (f.channels * f.chips_per_channel * f.dies_per_chip * planes) as u64
}

/// Write amplification of FIFO garbage collection under uniformly random page writes, in steady
/// state (Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012): a victim keeps
/// the fraction `u` of its pages that were not rewritten while the whole physical space in
/// rotation (`physical_over_logical` times the data) was written once more, so
/// `u = exp(-(1 - u) * physical_over_logical)` and WA = 1 / (1 - u). Steady-state
/// preconditioning is checked against it.
pub fn fifo_uniform_write_amplification(physical_over_logical: f64) -> f64 {
    assert!(physical_over_logical > 1.0, "the data must leave spare space");
    // The non-trivial root lies below 1; f(u) = u - exp(-(1 - u) r) is negative left of it.
    let (mut lo, mut hi) = (0.0f64, 1.0 - 1e-12);
    for _ in 0..200 {
        let u = 0.5 * (lo + hi);
        if u - (-(1.0 - u) * physical_over_logical).exp() > 0.0 {
            hi = u;
        } else {
            lo = u;
        }
    }
    1.0 / (1.0 - 0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Intel X25-M numbers from the paper (worn drive): 947.9 write and 4201.7 read IOPS.
    #[test]
    fn reproduces_the_papers_x25m_figures() {
        let write = PageCosts { ch_us: 33.0, reg_us: 82.0, cell_us: 940.0 };
        let read = PageCosts { ch_us: 16.0, reg_us: 82.0, cell_us: 140.0 };
        assert!((qd1_iops(write, 1, 20) - 947.9).abs() < 0.05);
        assert!((qd1_iops(read, 1, 20) - 4201.7).abs() < 0.05);
    }

    #[test]
    fn large_requests_pipeline_over_the_channel_delay() {
        let read = PageCosts { ch_us: 16.0, reg_us: 82.0, cell_us: 140.0 };
        // No waiting when rho * R_ch covers a page: the pages stream at one per R_ch.
        assert_eq!(request_time_us(read, 128, 40), 16.0 * 127.0 + 238.0);
        // With little parallelism each cycle waits for the page time.
        assert_eq!(request_time_us(read, 4, 2), 16.0 * 3.0 + (238.0 - 32.0) + 238.0);
    }
}
