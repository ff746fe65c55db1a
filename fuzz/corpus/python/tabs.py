class A:
	def m(self):
		return 1
  	def n(self): pass
