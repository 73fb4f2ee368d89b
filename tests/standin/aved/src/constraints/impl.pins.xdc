# STAND-IN for AVED's src/constraints/impl.pins.xdc (kabe tests only; not AMD's)
