//! The C ABI from Rust: errors come back as codes with a message (never a panic across the
//! boundary), NULL pointers are refused, short buffers say what they need.

use std::ffi::{CStr, CString};
use std::ptr;

use ssdlab::*;

const CONFIG: &str = "[flash]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 32\npages_per_block = 16\npage_size = \"4KiB\"\n[ftl]\nover_provisioning = 0.2\n[data]\nemulate = true\n";

fn last_error() -> String {
    // SAFETY: ssdlab_last_error returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(ssdlab_last_error()) }.to_string_lossy().into_owned()
}

fn open() -> *mut SsdlabDevice {
    let text = CString::new(CONFIG).unwrap();
    let mut dev = ptr::null_mut();
    // SAFETY: valid strings and out pointer.
    assert_eq!(
        unsafe { ssdlab_device_new(text.as_ptr(), ptr::null(), &mut dev) },
        SsdlabStatus::SsdlabOk,
        "{}",
        last_error()
    );
    dev
}

fn request(id: u64, op: u8, start_sector: u64, sectors: u32) -> SsdlabRequest {
    SsdlabRequest {
        id,
        queue: 0,
        op,
        directive_type: 0,
        directive_specific: 0,
        start_sector,
        sectors,
        data: ptr::null(),
        data_len: 0,
    }
}

fn drain(dev: *mut SsdlabDevice) {
    let mut t = 0;
    // SAFETY: a live device.
    unsafe {
        while ssdlab_next_event_time(dev, &mut t) == 1 {
            assert_eq!(ssdlab_advance_to(dev, t), SsdlabStatus::SsdlabOk, "{}", last_error());
        }
    }
}

fn results(dev: *mut SsdlabDevice) -> serde_json::Value {
    let mut needed = 0;
    // SAFETY: a live device, a buffer of the size it asks for.
    unsafe {
        ssdlab_results_json(dev, ptr::null_mut(), 0, &mut needed);
        let mut json = vec![0u8; needed];
        assert_eq!(ssdlab_results_json(dev, json.as_mut_ptr().cast(), needed, &mut needed), SsdlabStatus::SsdlabOk);
        serde_json::from_str(CStr::from_bytes_with_nul(&json).unwrap().to_str().unwrap()).unwrap()
    }
}

#[test]
fn the_request_layout_kept_its_offsets_when_directives_took_the_padding() {
    assert_eq!(std::mem::size_of::<SsdlabRequest>(), 48);
    assert_eq!(std::mem::offset_of!(SsdlabRequest, op), 10);
    assert_eq!(std::mem::offset_of!(SsdlabRequest, directive_type), 11);
    assert_eq!(std::mem::offset_of!(SsdlabRequest, directive_specific), 12);
    assert_eq!(std::mem::offset_of!(SsdlabRequest, start_sector), 16);
    assert_eq!(std::mem::offset_of!(SsdlabRequest, data), 32);
}

#[test]
fn a_write_with_a_data_placement_directive_lands_in_its_reclaim_unit_handle() {
    // Room for four handles' open reclaim units beside the fill's data.
    let config = CONFIG.replace("blocks_per_plane = 32", "blocks_per_plane = 256");
    let text = CString::new(format!("{config}[ftl.fdp]\nreclaim_unit_handles = 4\n")).unwrap();
    let mut dev = ptr::null_mut();
    // SAFETY: valid strings, out pointer, requests; the device is freed once.
    unsafe {
        assert_eq!(ssdlab_device_new(text.as_ptr(), ptr::null(), &mut dev), SsdlabStatus::SsdlabOk, "{}", last_error());
        let write = |id, dtype, dspec| SsdlabRequest {
            directive_type: dtype,
            directive_specific: dspec,
            ..request(id, SsdlabOp::SsdlabWrite as u8, id * 8, 8)
        };
        assert_eq!(ssdlab_submit(dev, &write(1, 2, 3)), SsdlabStatus::SsdlabOk, "{}", last_error());
        assert_eq!(ssdlab_submit(dev, &write(2, 0, 0)), SsdlabStatus::SsdlabOk);
        assert_eq!(ssdlab_submit(dev, &write(3, 2, 9)), SsdlabStatus::SsdlabOk, "handle 9 is not offered: handle 0");
        assert_eq!(ssdlab_submit(dev, &write(4, 1, 0)), SsdlabStatus::SsdlabInvalidArgument);
        assert!(last_error().contains("directive_type 1"), "{}", last_error());
        assert_eq!(ssdlab_submit(dev, &write(4, 0, 3)), SsdlabStatus::SsdlabInvalidArgument);
        assert!(last_error().contains("directive_specific"), "{}", last_error());
        let read = SsdlabRequest { directive_type: 2, ..request(5, SsdlabOp::SsdlabRead as u8, 8, 8) };
        assert_eq!(ssdlab_submit(dev, &read), SsdlabStatus::SsdlabRequestRefused);
        assert!(last_error().contains("only a write carries a placement handle"), "{}", last_error());
        drain(dev);
        let fdp = &results(dev)["fdp"];
        let host = |h: usize| fdp["handles"][h]["host_bytes_written"].as_u64().unwrap();
        assert_eq!((host(0), host(1), host(2), host(3)), (8192, 0, 0, 4096), "{fdp}");
        assert_eq!(fdp["events"]["invalid_placement_identifier"], 1);
        assert_eq!(fdp["events"]["log"][0]["placement_identifier"], 9);
        assert_eq!(fdp["events"]["log"][0]["namespace_id"], 1);
        ssdlab_device_free(dev);
    }
    let plain = open();
    let write = SsdlabRequest { directive_type: 2, ..request(1, SsdlabOp::SsdlabWrite as u8, 0, 8) };
    // SAFETY: a live device and a valid request.
    unsafe {
        assert_eq!(ssdlab_submit(plain, &write), SsdlabStatus::SsdlabRequestRefused);
        assert!(last_error().contains("[ftl.fdp]"), "{}", last_error());
        ssdlab_device_free(plain);
    }
}

#[test]
fn op_codes_are_the_core_ops_codes() {
    use ssdlab_core::device::Op;
    let c_ops = [
        SsdlabOp::SsdlabRead,
        SsdlabOp::SsdlabWrite,
        SsdlabOp::SsdlabFlush,
        SsdlabOp::SsdlabTrim,
        SsdlabOp::SsdlabWriteZeroes,
        SsdlabOp::SsdlabZoneAppend,
        SsdlabOp::SsdlabZoneOpen,
        SsdlabOp::SsdlabZoneClose,
        SsdlabOp::SsdlabZoneFinish,
        SsdlabOp::SsdlabZoneReset,
    ];
    assert_eq!(c_ops.len(), Op::ALL.len());
    for (c, op) in c_ops.into_iter().zip(Op::ALL) {
        assert_eq!(c as u8, op.code(), "{op:?}");
        assert_eq!(Op::from_code(c as u8), Some(op));
    }
    assert_eq!(Op::from_code(Op::ALL.len() as u8), None);
}

#[test]
fn null_pointers_and_bad_values_are_refused_with_a_message() {
    let mut dev = ptr::null_mut();
    // SAFETY: the calls are made to check NULL handling.
    unsafe {
        assert_eq!(ssdlab_device_new(ptr::null(), ptr::null(), &mut dev), SsdlabStatus::SsdlabInvalidArgument);
        assert!(last_error().contains("config_toml is NULL"));
        assert_eq!(ssdlab_submit(ptr::null_mut(), ptr::null()), SsdlabStatus::SsdlabInvalidArgument);
        assert!(last_error().contains("device is NULL"));
        assert_eq!(ssdlab_advance_to(ptr::null_mut(), 5), SsdlabStatus::SsdlabInvalidArgument);
        assert_eq!(ssdlab_now_ps(ptr::null()), 0);
        ssdlab_device_free(ptr::null_mut());
    }
    let bad = CString::new("[flash]\nchanels = 2\n").unwrap();
    // SAFETY: valid string and out pointer.
    assert_eq!(unsafe { ssdlab_device_new(bad.as_ptr(), ptr::null(), &mut dev) }, SsdlabStatus::SsdlabConfigError);
    assert!(last_error().contains("chanels"), "{}", last_error());
    let dev = open();
    // SAFETY: a live device and valid requests.
    unsafe {
        assert_eq!(ssdlab_submit(dev, &request(1, 10, 0, 8)), SsdlabStatus::SsdlabInvalidArgument);
        assert!(last_error().contains("op 10"), "{}", last_error());
        assert_eq!(ssdlab_submit(dev, &request(1, 0, 0, 0)), SsdlabStatus::SsdlabRequestRefused);
        assert!(last_error().contains("at least one sector"));
        ssdlab_device_free(dev);
    }
}

#[test]
fn a_short_buffer_keeps_the_completion_and_says_what_it_needs() {
    let dev = open();
    let mut out = std::mem::MaybeUninit::<SsdlabCompletion>::uninit();
    let mut small = [0u8; 512];
    let mut big = vec![0u8; 4096];
    // SAFETY: a live device, valid buffers.
    unsafe {
        assert_eq!(ssdlab_submit(dev, &request(7, SsdlabOp::SsdlabRead as u8, 0, 8)), SsdlabStatus::SsdlabOk);
        let mut t = 0;
        while ssdlab_next_event_time(dev, &mut t) == 1 {
            assert_eq!(ssdlab_advance_to(dev, t), SsdlabStatus::SsdlabOk);
        }
        let r = ssdlab_poll_completion(dev, out.as_mut_ptr(), small.as_mut_ptr(), small.len());
        assert_eq!(r, SsdlabStatus::SsdlabBufferTooSmall as i32);
        assert_eq!(out.assume_init_ref().data_len, 4096);
        assert_eq!(ssdlab_poll_completion(dev, out.as_mut_ptr(), big.as_mut_ptr(), big.len()), 1);
        let c = out.assume_init_ref();
        assert_eq!((c.id, c.op, c.status), (7, SsdlabOp::SsdlabRead as u8, 0));
        assert!(
            c.completed_ps > c.submitted_ps && c.breakdown_ps.iter().sum::<u64>() == c.completed_ps - c.submitted_ps
        );
        assert!(big.iter().all(|&b| b == 0), "never written: zeros");
        assert_eq!(c.assigned_sector, u64::MAX, "only a zone append has one");
        // A zone command on a conventional namespace: status 1 (unsupported).
        assert_eq!(ssdlab_submit(dev, &request(8, SsdlabOp::SsdlabZoneReset as u8, 0, 0)), SsdlabStatus::SsdlabOk);
        while ssdlab_next_event_time(dev, &mut t) == 1 {
            assert_eq!(ssdlab_advance_to(dev, t), SsdlabStatus::SsdlabOk);
        }
        assert_eq!(ssdlab_poll_completion(dev, out.as_mut_ptr(), big.as_mut_ptr(), big.len()), 1);
        assert_eq!((out.assume_init_ref().id, out.assume_init_ref().status), (8, 1));
        assert_eq!(ssdlab_poll_completion(dev, out.as_mut_ptr(), big.as_mut_ptr(), big.len()), 0);
        let mut needed = 0;
        assert_eq!(ssdlab_results_json(dev, ptr::null_mut(), 0, &mut needed), SsdlabStatus::SsdlabBufferTooSmall);
        let mut json = vec![0u8; needed];
        assert_eq!(ssdlab_results_json(dev, json.as_mut_ptr().cast(), needed, &mut needed), SsdlabStatus::SsdlabOk);
        assert!(CStr::from_bytes_with_nul(&json).unwrap().to_str().unwrap().contains("ssdlab.results/1"));
        ssdlab_device_free(dev);
    }
}
