# SPDX-License-Identifier: MIT
# vigildistri.pm - the distribution class of distri-perl-debian, written as
# os-autoinst-distri-opensuse writes its own: consoles added in init, a
# login in activate_console the first time a console is selected.
package vigildistri;
use base 'distribution';
use strict;
use warnings;
# Only what it calls: testapi's script_run & co. imported here would
# override distribution's methods of the same names (and recurse).
use testapi qw(assert_screen get_var send_key type_password type_string wait_serial);

sub init {
    my ($self) = @_;
    $self->SUPER::init();
    $testapi::username = 'root';
    $testapi::password = get_var('PASSWORD');
    $self->add_console('vga-console', 'tty-console', {tty => 1});
    $self->add_console('root-console', 'tty-console', {tty => 2});
    $self->add_console('x11', 'tty-console', {tty => 7});
    $self->add_console('root-sut-serial', 'serial-terminal', {persistent => 1});
    # the guest's hvc0 with VIRTIO_CONSOLE=1
    $self->add_console('root-virtio-terminal', 'virtio-terminal', {});
    # a class vigil does not implement: accepted here, refused when selected
    $self->add_console('x3270', 's3270', {});
}

# Logs in as root on a serial terminal: a plain prompt and no line
# editing, so that the typed commands come back as typed.
sub serial_login {
    my ($self) = @_;
    type_string "\n";
    wait_serial('login:', 60) || die "no login prompt on the serial terminal\n";
    type_string "root\n";
    wait_serial('Password:', 30) || die "no password prompt on the serial terminal\n";
    type_password;
    type_string "\n";
    wait_serial(qr/root\@vigil-debian:~# /, 60) || die "no root prompt on the serial terminal\n";
    type_string "export TERM=dumb PS1='# '; stty cols 2048; bind 'set enable-bracketed-paste off'\n";
    wait_serial('# ', 10, 0, no_regex => 1) || die "no plain prompt\n";
    # a prompt for script_run to wait for
    type_string "\n";
}

sub activate_console {
    my ($self, $console) = @_;
    $self->{activations}->{$console}++;
    if ($console eq 'root-console') {
        assert_screen 'debian-tty2-login', 60;
        type_string "root\n";
        assert_screen 'debian-password', 30;
        type_password;
        send_key 'ret';
        type_string "clear; echo vigil-vga-\$((6*7))\n";
        assert_screen 'debian-vga-42', 60;
    }
    elsif ($console eq 'root-sut-serial' || $console eq 'root-virtio-terminal') {
        $self->serial_login;
    }
}

1;
