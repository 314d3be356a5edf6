use serde_json::json;

use super::import;
use super::schema::{duration_ns, fraction, schema_has, size_bytes};
use super::tags::{closest, FLASH_TAGS};

fn device(flash: &str, device: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?><Execution_Parameter_Set><Host_Parameter_Set><PCIe_Lane_Count>4</PCIe_Lane_Count></Host_Parameter_Set>\
         <Device_Parameter_Set>{device}<Flash_Channel_Count>2</Flash_Channel_Count><Chip_No_Per_Channel>2</Chip_No_Per_Channel>\
         <Flash_Parameter_Set><Die_No_Per_Chip>1</Die_No_Per_Chip><Plane_No_Per_Die>2</Plane_No_Per_Die>\
         <Block_No_Per_Plane>64</Block_No_Per_Plane><Page_No_Per_Block>64</Page_No_Per_Block>{flash}</Flash_Parameter_Set>\
         </Device_Parameter_Set></Execution_Parameter_Set>"
    )
}

fn workload(flows: &[&str]) -> String {
    let flows: Vec<String> = flows
        .iter()
        .map(|f| format!("<IO_Flow_Parameter_Set_Synthetic>{f}</IO_Flow_Parameter_Set_Synthetic>"))
        .collect();
    format!("<MQSim_IO_Scenarios><IO_Scenario>{}</IO_Scenario></MQSim_IO_Scenarios>", flows.join(""))
}

const FLOW: &str = "<Average_No_of_Reqs_in_Queue>4</Average_No_of_Reqs_in_Queue><Total_Requests_To_Generate>100</Total_Requests_To_Generate>";
const OP: &str = "<Overprovisioning_Ratio>0.125</Overprovisioning_Ratio>";

#[test]
fn units_are_written_exactly() {
    assert_eq!(duration_ns(75_000), "75us");
    assert_eq!(duration_ns(3_800_000), "3800us");
    assert_eq!(duration_ns(10_000_000_000), "10s");
    assert_eq!(duration_ns(1_500), "1500ns");
    assert_eq!(size_bytes(8192), "8KiB");
    assert_eq!(size_bytes(2_097_152), "2MiB");
    assert_eq!(size_bytes(4000), "4000B");
    assert_eq!(fraction(7.0), 0.07);
    assert_eq!(fraction(75.0), 0.75);
}

#[test]
fn suggestions_find_the_intended_tag() {
    assert_eq!(closest("Page_Capacityy", FLASH_TAGS), Some("Page_Capacity"));
    assert_eq!(closest("page_capacity", FLASH_TAGS), Some("Page_Capacity"));
    assert_eq!(closest("Something_Else_Entirely", FLASH_TAGS), None);
}

#[test]
fn hot_cold_sends_the_complement_of_the_hot_share_to_the_hot_region() {
    let flow = format!(
        "{FLOW}<Address_Distribution>RANDOM_HOTCOLD</Address_Distribution><Percentage_of_Hot_Region>20</Percentage_of_Hot_Region>"
    );
    let imported = import(&device("", OP), &workload(&[&flow])).unwrap();
    let f = &imported.scenarios[0].config["flows"][0];
    assert_eq!(f["address"], "hotcold");
    assert_eq!(f["hot_fraction"], 0.2);
    assert_eq!(f["hot_traffic"], 0.8);
}

#[test]
fn bandwidth_is_bytes_per_second_and_intensity_sectors_per_second() {
    let bw =
        "<Synthetic_Generator_Type>BANDWIDTH</Synthetic_Generator_Type><Average_Request_Size>8</Average_Request_Size>\
              <Bandwidth>4194304</Bandwidth><Total_Requests_To_Generate>10</Total_Requests_To_Generate>";
    let imported = import(&device("", OP), &workload(&[bw])).unwrap();
    assert_eq!(imported.scenarios[0].config["flows"][0]["rate"], "1024/s");
    let intensity = "<Synthetic_Generator_Type>ARRIVAL_RATE</Synthetic_Generator_Type><Average_Request_Size>8</Average_Request_Size>\
              <Intensity>32768</Intensity><Total_Requests_To_Generate>10</Total_Requests_To_Generate>";
    let imported = import(&device("", OP), &workload(&[intensity])).unwrap();
    assert_eq!(imported.scenarios[0].config["flows"][0]["rate"], "4096/s");
    assert!(imported.scenarios[0].warnings.iter().any(|w| w.starts_with("Intensity 32768")));
}

#[test]
fn several_flows_get_their_own_slice_of_the_logical_space() {
    let flow = format!("{FLOW}<Working_Set_Percentage>50</Working_Set_Percentage>");
    let imported = import(&device("", OP), &workload(&[&flow, &flow])).unwrap();
    let flows = &imported.scenarios[0].config["flows"];
    assert_eq!(flows[0]["working_set"], 0.25);
    assert_eq!(flows[0]["working_set_start"], 0.0);
    assert_eq!(flows[1]["working_set_start"], 0.5);
}

#[test]
fn a_flow_alone_on_part_of_the_flash_gets_that_parts_slice() {
    // MQSim gives a flow the logical pages of the planes it may use, alone as beside others.
    let narrow = format!("{FLOW}<Channel_IDs>0</Channel_IDs><Working_Set_Percentage>100</Working_Set_Percentage>");
    let imported = import(&device("", OP), &workload(&[&narrow])).unwrap();
    let flow = &imported.scenarios[0].config["flows"][0];
    assert_eq!((flow["working_set_start"].clone(), flow["working_set"].clone()), (0.0.into(), 0.5.into()));
    // Preconditioned, it fills its occupancy of that slice only.
    let filled =
        narrow.replace("<Channel_IDs>", "<Initial_Occupancy_Percentage>80</Initial_Occupancy_Percentage><Channel_IDs>");
    let imported =
        import(&device("<Enabled_Preconditioning>true</Enabled_Preconditioning>", OP), &workload(&[&filled])).unwrap();
    assert_eq!(imported.scenarios[0].config["precondition"]["occupancy"], 0.4);
}

#[test]
fn slices_follow_the_flows_share_of_the_planes_as_in_mqsim() {
    // Channel 0's planes are shared (half each), channel 1's belong to flow-1 alone.
    let narrow = format!("{FLOW}<Channel_IDs>0</Channel_IDs>");
    let wide = format!("{FLOW}<Channel_IDs>0,1</Channel_IDs><Working_Set_Percentage>50</Working_Set_Percentage>");
    let imported = import(&device("", OP), &workload(&[&narrow, &wide])).unwrap();
    let flows = &imported.scenarios[0].config["flows"];
    assert_eq!((flows[0]["working_set_start"].clone(), flows[0]["working_set"].clone()), (0.0.into(), 0.25.into()));
    assert_eq!((flows[1]["working_set_start"].clone(), flows[1]["working_set"].clone()), (0.25.into(), 0.375.into()));
    // The restriction itself: mapped where ssdlab partitions resources, warned about otherwise.
    if schema_has("flows", "channels") {
        assert_eq!(flows[0]["channels"], json!([0]));
        assert!(flows[1].get("channels").is_none(), "all channels is the default");
    } else {
        assert!(imported.scenarios[0].warnings.iter().any(|w| w.starts_with("Channel_IDs 0 (flow-0)")));
    }
}

#[test]
fn a_bad_enum_value_is_an_error_naming_the_tag() {
    let e = import(
        &device("", &format!("{OP}<GC_Block_Selection_Policy>GREEDIEST</GC_Block_Selection_Policy>")),
        &workload(&[FLOW]),
    )
    .unwrap_err();
    assert!(e.path.ends_with("GC_Block_Selection_Policy"), "{e}");
    assert!(e.reason.contains("GREEDIEST") && e.reason.contains("RGA"), "{e}");
}

#[test]
fn unclosed_and_swapped_files_are_errors() {
    let e = import("<Execution_Parameter_Set><Host_Parameter_Set>", &workload(&[FLOW])).unwrap_err();
    assert!(e.to_string().contains("malformed XML"), "{e}");
    let e = import(&workload(&[FLOW]), &device("", OP)).unwrap_err();
    assert!(e.reason.contains("workload file"), "{e}");
}

#[test]
fn default_values_are_silent() {
    let quiet = format!(
        "{OP}<Preemptible_GC_Enabled>false</Preemptible_GC_Enabled><Use_Copyback_for_GC>false</Use_Copyback_for_GC>\
         <Transaction_Scheduling_Policy>OUT_OF_ORDER</Transaction_Scheduling_Policy><Address_Mapping>PAGE_LEVEL</Address_Mapping>"
    );
    let flow = format!(
        "{FLOW}<Channel_IDs>0,1</Channel_IDs><Priority_Class>HIGH</Priority_Class><Device_Level_Data_Caching_Mode>TURNED_OFF</Device_Level_Data_Caching_Mode>"
    );
    let imported =
        import(&device("<CMD_Suspension_Support>NONE</CMD_Suspension_Support>", &quiet), &workload(&[&flow])).unwrap();
    assert_eq!(imported.scenarios[0].warnings, Vec::<String>::new());
}
