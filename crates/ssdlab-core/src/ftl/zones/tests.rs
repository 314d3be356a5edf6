//! The zone state machine against NVMe ZNS 1.1's rules (section 2.1.1 and figure 28's status
//! values), on a small layout: 8 zones of 64 sectors, 2 open and 3 active at most.

use super::*;
use crate::device::Op;

fn table(max_open: u32, max_active: u32) -> ZoneTable {
    let config = crate::config::Config::device_from_toml_str(
        "[flash]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1",
    )
    .unwrap();
    let geometry = Geometry::new(&config);
    let layout = ZoneLayout {
        zones: 8,
        zone_sectors: 128,
        capacity_sectors: 64,
        zone_planes: 2,
        blocks_per_plane: 1,
        max_open,
        max_active,
        finish_pads: true,
        write_unit_sectors: 8,
    };
    ZoneTable::new(layout, &geometry)
}

#[test]
fn writes_must_start_at_the_write_pointer_and_fill_the_zone() {
    let mut t = table(2, 3);
    assert_eq!(t.accept_write(0, 8, 8, false), Err(Status::ZoneInvalidWrite));
    assert_eq!(t.state(0), ZoneState::Empty, "a refused write opens nothing");
    assert_eq!(t.accept_write(0, 0, 8, false), Ok(0));
    assert_eq!(t.state(0), ZoneState::ImplicitlyOpen);
    assert_eq!(t.accept_write(0, 0, 8, false), Err(Status::ZoneInvalidWrite), "the pointer moved on");
    assert_eq!(t.accept_write(0, 8, 64, false), Err(Status::ZoneBoundaryError), "past the capacity");
    assert_eq!(t.accept_write(0, 8, 56, false), Ok(8));
    assert_eq!(t.state(0), ZoneState::Full);
    assert_eq!(t.accept_write(0, 64, 8, false), Err(Status::ZoneIsFull));
    t.check().unwrap();
}

#[test]
fn an_append_lands_at_the_write_pointer_and_names_the_zone_start() {
    let mut t = table(2, 3);
    assert_eq!(t.accept_write(1, 0, 16, true), Ok(0));
    assert_eq!(t.accept_write(1, 0, 16, true), Ok(16));
    assert_eq!(t.accept_write(1, 16, 16, true), Err(Status::InvalidField), "an append names the zone's start");
    assert_eq!(t.accept_write(1, 0, 12, true), Err(Status::InvalidField), "whole pages only");
    assert_eq!(t.accept_write(1, 32, 4, false), Err(Status::InvalidField), "whole pages only");
    assert_eq!(t.write_pointer(1), 32);
}

#[test]
fn the_open_limit_closes_an_implicitly_open_zone_and_the_active_limit_refuses() {
    let mut t = table(2, 3);
    t.accept_write(0, 0, 8, false).unwrap();
    t.accept_write(1, 0, 8, false).unwrap();
    // A third zone: the oldest implicitly open one is closed to make room.
    t.accept_write(2, 0, 8, false).unwrap();
    assert_eq!(t.state(0), ZoneState::Closed);
    assert_eq!(t.counts.implicit_closes, 1);
    // Three active (one closed, two open): a fourth is refused.
    assert_eq!(t.accept_write(3, 0, 8, false), Err(Status::TooManyActiveZones));
    // Writing the closed zone reopens it (closing another).
    assert_eq!(t.accept_write(0, 8, 8, false), Ok(8));
    assert_eq!(t.state(0), ZoneState::ImplicitlyOpen);
    t.check().unwrap();
}

#[test]
fn explicitly_open_zones_are_not_closed_for_room() {
    let mut t = table(2, 3);
    assert!(matches!(t.manage(0, Op::ZoneOpen, false), Ok(Management::Done)));
    assert!(matches!(t.manage(1, Op::ZoneOpen, false), Ok(Management::Done)));
    assert_eq!(t.accept_write(2, 0, 8, false), Err(Status::TooManyOpenZones));
    assert!(matches!(t.manage(1, Op::ZoneClose, false), Ok(Management::Done)));
    assert_eq!(t.accept_write(2, 0, 8, false), Ok(0));
    t.check().unwrap();
}

#[test]
fn management_follows_the_state_machine() {
    let mut t = table(2, 3);
    assert_eq!(t.manage(0, Op::ZoneClose, false).err(), Some(Status::InvalidZoneStateTransition));
    t.accept_write(0, 0, 8, false).unwrap();
    assert!(matches!(t.manage(0, Op::ZoneFinish, false), Ok(Management::Finish { .. })));
    assert_eq!((t.state(0), t.write_pointer(0)), (ZoneState::Full, 64));
    assert_eq!(t.manage(0, Op::ZoneOpen, false).err(), Some(Status::InvalidZoneStateTransition));
    match t.manage(0, Op::ZoneReset, false) {
        Ok(Management::Reset { written_sectors, .. }) => assert_eq!(written_sectors, 64),
        _ => panic!("a full zone resets"),
    }
    assert_eq!((t.state(0), t.write_pointer(0)), (ZoneState::Empty, 0));
    // A reset that takes the zone offline: nothing can be done with it after.
    t.accept_write(1, 0, 8, false).unwrap();
    assert!(t.manage(1, Op::ZoneReset, true).is_ok());
    assert_eq!(t.state(1), ZoneState::Offline);
    assert_eq!(t.accept_write(1, 0, 8, false), Err(Status::ZoneIsOffline));
    assert_eq!(t.manage(1, Op::ZoneReset, false).err(), Some(Status::ZoneIsOffline));
    t.check().unwrap();
    let counts = t.state_counts();
    assert_eq!(counts[ZoneState::Offline as usize], 1);
    assert_eq!(counts.iter().sum::<u64>(), 8);
}

#[test]
fn report_gives_host_addresses() {
    let mut t = table(2, 3);
    t.accept_write(3, 0, 24, false).unwrap();
    let r = t.report(2, 3);
    assert_eq!(r.len(), 3);
    assert_eq!((r[1].zone, r[1].start_sector, r[1].write_pointer), (3, 384, 408));
    assert_eq!(r[1].state, "implicitly_open");
    assert_eq!(t.report(7, 5).len(), 1, "clipped at the last zone");
}
