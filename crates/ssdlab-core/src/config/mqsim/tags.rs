//! Tags known to MQSim, per section (for "did you mean" and for the documentation), the known
//! tag closest to a misspelled one, and how warnings name tags with their values.

pub(super) const HOST_TAGS: &[&str] = &[
    "PCIe_Lane_Bandwidth",
    "PCIe_Lane_Count",
    "SATA_Processing_Delay",
    "Enable_ResponseTime_Logging",
    "ResponseTime_Logging_Period_Length",
];

pub(super) const DEVICE_TAGS: &[&str] = &[
    "Seed",
    "Enabled_Preconditioning",
    "Memory_Type",
    "HostInterface_Type",
    "IO_Queue_Depth",
    "Queue_Fetch_Size",
    "Caching_Mechanism",
    "Data_Cache_Sharing_Mode",
    "Data_Cache_Capacity",
    "Data_Cache_DRAM_Row_Size",
    "Data_Cache_DRAM_Data_Rate",
    "Data_Cache_DRAM_Data_Busrt_Size",
    "Data_Cache_DRAM_Data_Burst_Size",
    "Data_Cache_DRAM_tRCD",
    "Data_Cache_DRAM_tCL",
    "Data_Cache_DRAM_tRP",
    "Address_Mapping",
    "Ideal_Mapping_Table",
    "CMT_Capacity",
    "CMT_Sharing_Mode",
    "Plane_Allocation_Scheme",
    "Transaction_Scheduling_Policy",
    "Overprovisioning_Ratio",
    "GC_Exec_Threshold",
    "GC_Block_Selection_Policy",
    "Use_Copyback_for_GC",
    "Preemptible_GC_Enabled",
    "GC_Hard_Threshold",
    "Dynamic_Wearleveling_Enabled",
    "Static_Wearleveling_Enabled",
    "Static_Wearleveling_Threshold",
    "Preferred_suspend_erase_time_for_read",
    "Prefered_suspend_erase_time_for_read",
    "Preferred_suspend_erase_time_for_write",
    "Preferred_suspend_write_time_for_read",
    "Flash_Channel_Count",
    "Flash_Channel_Width",
    "Channel_Transfer_Rate",
    "Chip_No_Per_Channel",
    "Flash_Comm_Protocol",
    "Flash_Parameter_Set",
];

pub(super) const FLASH_TAGS: &[&str] = &[
    "Flash_Technology",
    "CMD_Suspension_Support",
    "Page_Read_Latency_LSB",
    "Page_Read_Latency_CSB",
    "Page_Read_Latency_MSB",
    "Page_Program_Latency_LSB",
    "Page_Program_Latency_CSB",
    "Page_Program_Latency_MSB",
    "Block_Erase_Latency",
    "Block_PE_Cycles_Limit",
    "Suspend_Erase_Time",
    "Suspend_Program_Time",
    "Die_No_Per_Chip",
    "Plane_No_Per_Die",
    "Block_No_Per_Plane",
    "Page_No_Per_Block",
    "Page_Capacity",
    "Page_Metadat_Capacity",
    "Page_Metadata_Capacity",
];

pub(super) const FLOW_COMMON_TAGS: &[&str] = &[
    "Type",
    "Priority_Class",
    "Device_Level_Data_Caching_Mode",
    "Channel_IDs",
    "Chip_IDs",
    "Die_IDs",
    "Plane_IDs",
    "Initial_Occupancy_Percentage",
];

pub(super) const SYNTHETIC_TAGS: &[&str] = &[
    "Working_Set_Percentage",
    "Synthetic_Generator_Type",
    "Read_Percentage",
    "Address_Distribution",
    "Percentage_of_Hot_Region",
    "Generated_Aligned_Addresses",
    "Address_Alignment_Unit",
    "Request_Size_Distribution",
    "Average_Request_Size",
    "Variance_Request_Size",
    "Seed",
    "Average_No_of_Reqs_in_Queue",
    "Intensity",
    "Bandwidth",
    "Stop_Time",
    "Total_Requests_To_Generate",
];

pub(super) const TRACE_TAGS: &[&str] = &["File_Path", "Percentage_To_Be_Executed", "Relay_Count", "Time_Unit"];

/// The known tag closest to a misspelled one, if it is close enough to be the likely intent.
pub(super) fn closest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.len() / 4).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

// ------------------------------------------------------------------------------------------------
// Tags with their values, in warnings.

/// " (with Tag value, Tag value)" for the related tags that are present, "" if none is.
pub(super) fn with_tags(tags: &[(&str, Option<String>)]) -> String {
    let present: Vec<String> =
        tags.iter().filter_map(|(tag, value)| value.as_ref().map(|v| format!("{tag} {v}"))).collect();
    if present.is_empty() {
        String::new()
    } else {
        format!(" (with {})", present.join(", "))
    }
}

pub(super) fn shown<T: ToString>(value: Option<T>) -> Option<String> {
    value.map(|v| v.to_string())
}

/// "75 (flow-0, flow-1), 70 (flow-2)": values with the flows that have them, in first-seen order.
pub(super) fn by_value(items: &[(String, String)]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, value) in items {
        match groups.iter_mut().find(|(v, _)| v == value) {
            Some((_, names)) => names.push(name),
            None => groups.push((value, vec![name])),
        }
    }
    groups.iter().map(|(v, names)| format!("{v} ({})", names.join(", "))).collect::<Vec<_>>().join(", ")
}
