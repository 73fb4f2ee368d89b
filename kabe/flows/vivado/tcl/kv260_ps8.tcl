# Kria KV260 (K26 SOM on the KV260 carrier): the board's part of kabe's block design, for
# tcl/kabe_ps8.tcl. The PS8's DDR4, MIO and clocks are the board files' preset (the profile's
# vivado.board_part xilinx.com:kv260_som and its carrier connection som240_1_connector), so nothing of
# them is repeated here; what the board files do not do is the carrier's fan.
#
# The fan: the KV260 carrier's fan enable fan_en_b (active low, pin A12: tcl/kv260_carrier.xdc) is
# driven by the PS's TTC0 wave output over EMIO, bit 2 of the 3-bit emio_ttc0_wave_o, through an
# xlslice, exactly as AMD's KV260 platforms drive it (Xilinx/kria-vitis-platforms
# kv260/platforms/vivado/kv260_bist/scripts/config_bd.tcl: PSU__TTC0__WAVEOUT__ENABLE {1},
# PSU__TTC0__WAVEOUT__IO {EMIO}, create_bd_port -dir O -from 0 -to 0 fan_en_b, xlslice_fan with
# DIN_FROM 2, DIN_TO 2, DIN_WIDTH 3, DOUT_WIDTH 1). Without it the pin is left undriven by the PL
# and Linux's fan control (its PWM on TTC0) no longer reaches the fan.
# tests/flows/test_vivado_ps8.py holds every value here against those sources.

namespace eval ::kabe_board {}

# nothing beyond the board files' preset
proc ::kabe_board::ps8_preset {} { return {} }

proc ::kabe_board::fan_cell {} { return fan_slice }

proc ::kabe_board::extras {ps} {
  set_property -dict [list CONFIG.PSU__TTC0__WAVEOUT__ENABLE {1} CONFIG.PSU__TTC0__WAVEOUT__IO {EMIO}] $ps
  create_bd_port -dir O -from 0 -to 0 fan_en_b
  set slice [create_bd_cell -type ip -vlnv xilinx.com:ip:xlslice [::kabe_board::fan_cell]]
  set_property -dict [list CONFIG.DIN_FROM {2} CONFIG.DIN_TO {2} CONFIG.DIN_WIDTH {3} CONFIG.DOUT_WIDTH {1}] $slice
  connect_bd_net [get_bd_pins $ps/emio_ttc0_wave_o] [get_bd_pins $slice/Din]
  connect_bd_net [get_bd_pins $slice/Dout] [get_bd_ports fan_en_b]
}
