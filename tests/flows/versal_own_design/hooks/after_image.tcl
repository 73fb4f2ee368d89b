# design.yaml vivado.hooks.write_bitstream.post: on Versal the step that writes the image is write_device_image.
puts "acme: the device image is written"
