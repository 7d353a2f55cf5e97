//! Generates the Event Service's stubs and skeletons from `idl/`: the OMG's CosEventComm and
//! CosEventChannelAdmin (`CosEventChannelAdmin.idl` includes the other, so its output holds
//! both), the channel factory omniEvents serves (`EventChannelFactory.idl`), and the
//! Notification Service's filters (`CosNotifyFilter.idl`, with the CosNotification and
//! CosNotifyComm it includes). The pull suppliers' servants are AMH ones: a `pull` waiting
//! for an event must not hold the caller's connection.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    corbina_codegen::Builder::new()
        .include("idl")
        .amh_interfaces(["CosEventChannelAdmin::ProxyPullSupplier"])
        .compile(&[
            "idl/CosEventChannelAdmin.idl",
            "idl/EventChannelFactory.idl",
            "idl/CosNotifyFilter.idl",
        ])?;
    Ok(())
}
