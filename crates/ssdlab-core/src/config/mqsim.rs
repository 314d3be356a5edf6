//! Import of MQSim's configuration files (`ssdconfig.xml` and `workload.xml`) into ssdlab's schema.
