# SPDX-License-Identifier: MIT
# vigildistri.pm - the distribution class of distri-perl-debian, written as
# os-autoinst-distri-opensuse writes its own: consoles added in init, a
# login in activate_console the first time a console is selected, and its
# own x11_start_program (os-autoinst 4.6's distribution.pm only dies).
# Runs unchanged under isotovideo and vigil; VIGIL_EXTRA=1 (vigil only, for
# vigil_extra.pm) adds vigil's serial-terminal class and a class vigil does
# not implement.
package vigildistri;
use base 'distribution';
use strict;
use warnings;
# Only what it calls: testapi's script_run & co. imported here would
# override distribution's methods of the same names (and recurse).
use testapi qw(assert_screen check_var get_var send_key type_password type_string wait_serial);

sub init {
    my ($self) = @_;
    $self->SUPER::init();
    $testapi::username = 'root';
    $testapi::password = get_var('PASSWORD');
    $self->add_console('vga-console', 'tty-console', {tty => 1});
    $self->add_console('root-console', 'tty-console', {tty => 2});
    $self->add_console('x11', 'tty-console', {tty => 7});
    # the guest's hvc0 with VIRTIO_CONSOLE=1 (os-autoinst 4.6's only
    # terminal console on the qemu backend)
    $self->add_console('root-virtio-terminal', 'virtio-terminal', {persistent => 1});
    if (check_var('VIGIL_EXTRA', 1)) {
        # vigil's serial port terminal (no such class in os-autoinst 4.6)
        $self->add_console('root-sut-serial', 'serial-terminal', {persistent => 1});
        # a class vigil does not implement: accepted here, refused when selected
        $self->add_console('x3270', 's3270', {});
    }
}

# Logs in as root on a terminal console: a plain prompt and no line
# editing, so that the typed commands come back as typed.
sub serial_login {
    my ($self) = @_;
    type_string "\n";
    wait_serial('login:', 90) || die "no login prompt on the terminal\n";
    type_string "root\n";
    wait_serial('Password:', 30) || die "no password prompt on the terminal\n";
    type_password;
    type_string "\n";
    wait_serial(qr/root\@vigil-debian:~# /, 60) || die "no root prompt on the terminal\n";
    # the echo's output, not its echoed command line, ends the login: what
    # follows (the prompt script_run waits for) comes in one order only
    type_string "export TERM=dumb PS1='# '; stty cols 2048; bind 'set enable-bracketed-paste off'; echo vigil-\$((1+1))-ready\n";
    wait_serial('vigil-2-ready', 10, 0, no_regex => 1) || die "no plain prompt\n";
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
        # .hushlogin: no MOTD and no "Last login" (a time) on later logins
        type_string "touch .hushlogin; clear; echo vigil-vga-\$((6*7))\n";
        assert_screen 'debian-vga-42', 60;
    }
    elsif ($console eq 'root-sut-serial' || $console eq 'root-virtio-terminal') {
        $self->serial_login;
    }
}

# This desktop (twm, an xterm with the keyboard) has no run dialog: the
# program is typed into the xterm under the pointer, placed with
# -geometry (twm would otherwise ask where to put it), and its window is
# asserted by the tag target_match, the program's name by default, as
# os-autoinst's later default does.
sub x11_start_program {
    my ($self, $program, %args) = @_;
    type_string "$program -geometry 40x8+420+360 &\n";
    return if $args{no_wait} || ($args{target_match} // '') eq 'none';
    assert_screen($args{target_match} // $program, $args{match_timeout} // 90);
}

1;
