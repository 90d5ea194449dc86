
Q
x0Placeholder*
_user_specified_namex0*
dtype0*
shape
:
M
x1Placeholder*
_user_specified_namex1*
dtype0*
shape:
E
XlaOptimizationBarrierXlaOptimizationBarrierx0x1*
T
2
1
out0IdentityXlaOptimizationBarrier*
T0
3
out1IdentityXlaOptimizationBarrier:1*
T0
#
IdentityIdentityout0*
T0
%

Identity_1Identityout1*
T0"ª