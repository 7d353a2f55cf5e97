//! Generates the services' stubs and skeletons from `idl/`: the Notification Service's
//! channel (`CosNotifyChannelAdmin.idl`, which includes CosEventChannelAdmin, CosEventComm,
//! CosNotifyFilter, CosNotification and CosNotifyComm: one output, so the notification
//! interfaces and the event ones they inherit are the same Rust types), and the channel
//! factory omniEvents serves (`EventChannelFactory.idl`), and TimeBase (`UtcT`, the type
//! of a structured event's `StartTime`/`StopTime`). The pull suppliers' servants are
//! AMH ones: a `pull` waiting for an event must not hold the caller's connection.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new()
        .include("idl")
        .amh_interfaces([
            "CosEventChannelAdmin::ProxyPullSupplier",
            "CosNotifyChannelAdmin::ProxyPullSupplier",
            "CosNotifyChannelAdmin::StructuredProxyPullSupplier",
            "CosNotifyChannelAdmin::SequenceProxyPullSupplier",
        ])
        .compile(&[
            "idl/CosNotifyChannelAdmin.idl",
            "idl/EventChannelFactory.idl",
            "idl/TimeBase.idl",
        ])?;
    Ok(())
}
