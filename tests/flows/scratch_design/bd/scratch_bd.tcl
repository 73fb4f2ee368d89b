# A small block design of the design's own, in write_bd_tcl's shape: a constant driving one output port.
set scripts_vivado_version 2023.2
set current_vivado_version [version -short]
if { [string first $scripts_vivado_version $current_vivado_version] == -1 } {
   catch {common::send_gid_msg -ssname BD::TCL -id 2041 -severity "ERROR" "This script was generated using Vivado <$scripts_vivado_version> and is being run in <$current_vivado_version>"}
   return 1
}
set design_name scratch_bd
create_bd_design $design_name
current_bd_design $design_name
set led_bd [ create_bd_port -dir O -from 0 -to 0 led_bd ]
set const0 [ create_bd_cell -type ip -vlnv xilinx.com:ip:xlconstant:1.1 const0 ]
set_property -dict [list CONFIG.CONST_VAL {1} CONFIG.CONST_WIDTH {1}] $const0
connect_bd_net -net const0_dout [get_bd_pins const0/dout] [get_bd_ports led_bd]
validate_bd_design
save_bd_design
