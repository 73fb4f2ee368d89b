# The Vivado version pin: [tool.kabe] vivado_version in pyproject.toml (empty: nothing pinned).
# A mismatch warns or stops the build per [tool.kabe] vivado_version_mismatch = "warn" | "fail".
# Runs at project creation and again inside impl_1 (the run may start another Vivado).
set _have [version -short]
set _pin $::kabe(vivado_version)
if {$_pin ne "" && $_have ne $_pin && ![string match "$_pin.*" $_have]} {
  set _msg "kabe: Vivado $_have is running but pyproject.toml \[tool.kabe\] vivado_version pins $_pin"
  if {$::kabe(vivado_version_mismatch) eq "fail"} {
    error "$_msg (vivado_version_mismatch = fail). Put Vivado $_pin on PATH or change the pin."
  }
  puts "CRITICAL WARNING: $_msg; timing and utilization may differ from the pinned version's"
} else {
  puts "kabe: Vivado $_have (pin: [expr {$_pin eq "" ? "none" : $_pin}])"
}
unset _have _pin
