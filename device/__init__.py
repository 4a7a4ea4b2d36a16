"""Hardware adapters: buttons, OLED and camera behind small Protocols.

Depends on nothing of ours. Import the modules you need
(``from device.factory import make_hardware``); this package imports nothing
itself so that importing it never loads gpiozero, luma or OpenCV.
"""
