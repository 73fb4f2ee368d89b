# The design's IPs, from kabe's IP cache (kabe.flows.vivado.ip_cache copied each unit into the project's
# ip/<name>/): read with their generated products and out-of-context checkpoint, so Vivado generates
# nothing here. A locked IP (made by another Vivado version) stops the build; kabe never upgrades here.
foreach _ip $::kabe(ips) {
  lassign $_ip _name _xci
  read_ip $_xci
  if {[get_property IS_LOCKED [get_ips $_name]]} {
    error "kabe: IP $_name ($_xci) is locked in this Vivado; the IP cache entry was made by another version"
  }
  puts "kabe: IP $_name read from the IP cache ($_xci)"
}
catch {unset _ip _name _xci}
