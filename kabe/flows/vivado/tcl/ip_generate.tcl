# The IP cache's misses, generated in one in-memory project (kabe.flows.vivado.ip_cache writes
# ::kabe_ip(part) and ::kabe_ip(ips) first). Per IP: an .xci is copied in and read, an IP Tcl's
# configuration is created; then its output products and its out-of-context checkpoint. An .xci from
# another Vivado version reaches here only when design.yaml allows the upgrade (upgrade = 1), and the
# upgrade is said; a locked IP otherwise stops the run (never upgraded silently).
create_project -in_memory -part $::kabe_ip(part)
foreach _ip $::kabe_ip(ips) {
  lassign $_ip _name _kind _vlnv _source _out _config _upgrade
  file mkdir $_out
  if {$_kind eq "xci"} {
    set _xci [file join $_out $_name.xci]
    file copy -force $_source $_xci
    read_ip $_xci
    if {$_upgrade} {
      upgrade_ip [get_ips $_name]
      puts "kabe: IP $_name upgraded to this Vivado's version (design.yaml vivado.ip_upgrade)"
    }
    if {[get_property IS_LOCKED [get_ips $_name]]} {
      error "kabe: IP $_name ($_source) is locked (made by another Vivado version); upgrade it or pin that version"
    }
  } else {
    create_ip -vlnv $_vlnv -module_name $_name -dir [file dirname $_out]
    if {[llength $_config]} { set_property -dict $_config [get_ips $_name] }
  }
  generate_target all [get_ips $_name]
  synth_ip [get_ips $_name]
  puts "kabe: IP $_name generated"
}
unset _ip _name _kind _vlnv _source _out _config _upgrade
