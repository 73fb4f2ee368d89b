-- In the VHDL library acme_lib (the core file's logical_name), not Vivado's default xil_defaultlib:
-- blink.vhd reaches it as acme_lib.blink_pkg, as a team's shared VHDL packages are reached.
library ieee;
use ieee.std_logic_1164.all;

package blink_pkg is
  constant LED_ON : std_logic := '1';  -- the LEDs are active high on the PYNQ-Z1
end package;
