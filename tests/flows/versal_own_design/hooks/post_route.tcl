# The design's post-route hook (design.yaml vivado.hooks.route_design.post): runs inside impl_1.
puts "acme: post-route hook ran on [current_design]"
