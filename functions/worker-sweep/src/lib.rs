//! The `worker-sweep` function: the monitoring sweep's coordinator, run by an EventBridge
//! schedule. The sweep itself lives in `mailward_http::sweep`; batches are evaluated by
//! `worker-queue`.
