print("facewire")
