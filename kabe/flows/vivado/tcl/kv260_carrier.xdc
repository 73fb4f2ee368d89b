# Kria KV260 carrier: the pins kabe's KV260 block design drives (kabe/flows/vivado/tcl/kv260_ps8.tcl).
#
# The fan enable, exactly as AMD's KV260 platforms constrain it: Xilinx/kria-vitis-platforms
# kv260/platforms/vivado/kv260_bist/xdc/pin.xdc ("#Fan Speed Enable": PACKAGE_PIN A12, LVCMOS33, SLEW
# SLOW, DRIVE 4; the HDA20 pin of bank 45 on the carrier's SOM240_1 connector). Active low: the PS's
# TTC0 wave output drives it, so Linux's fan control keeps working while a kabe bitstream is loaded.
set_property PACKAGE_PIN A12 [get_ports {fan_en_b}]
set_property IOSTANDARD LVCMOS33 [get_ports {fan_en_b}]
set_property SLEW SLOW [get_ports {fan_en_b}]
set_property DRIVE 4 [get_ports {fan_en_b}]
