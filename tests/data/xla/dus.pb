
Q
x0Placeholder*
_user_specified_namex0*
dtype0*
shape
:
Q
x1Placeholder*
_user_specified_namex1*
dtype0*
shape
:
M
x2Placeholder*
_user_specified_namex2*
dtype0*
shape:
S
XlaDynamicUpdateSliceXlaDynamicUpdateSlicex0x1x2*
T0*
Tindices0
0
out0IdentityXlaDynamicUpdateSlice*
T0
#
IdentityIdentityout0*
T0"ª