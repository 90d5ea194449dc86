
U
x0Placeholder*
_user_specified_namex0*
dtype0*
shape:
Q
x1Placeholder*
_user_specified_namex1*
dtype0*
shape
:
B
	XlaEinsum	XlaEinsumx0x1*
T0*
equationabc,cd->abd
$
out0Identity	XlaEinsum*
T0
#
IdentityIdentityout0*
T0"ª