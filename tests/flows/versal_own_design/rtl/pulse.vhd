library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
library acme_versal;
use acme_versal.pulse_pkg.all;

entity pulse is
  port (clk : in std_logic; rst : in std_logic; q : out std_logic);
end entity;

architecture rtl of pulse is
  signal count : unsigned(PULSE_BITS - 1 downto 0) := (others => '0');
begin
  process (clk) begin
    if rising_edge(clk) then
      if rst = '1' then count <= (others => '0'); else count <= count + 1; end if;
    end if;
  end process;
  q <= count(PULSE_BITS - 1);
end architecture;
