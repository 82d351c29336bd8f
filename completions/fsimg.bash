# bash completion for fsimg (installed as share/bash-completion/completions/fsimg).
# Made by src/docgen (scripts/gen-docs) from completions/fsimg.bash.in: the
# command and option lists come from fsimg's command-line definition.

_fsimg_options() {
    case $1 in
        mkfs) echo "-h --help -t --type -s --size -c --cluster-size --sector-size -L --label --volume-id --partition-table --partition-type --partition-start --disk-id --partition-uuid --partition-name --bootable --hidden-sectors --align --mft-record-size --force --keep-type --device --gzip -v --explain -q --quiet --json --from --local-time --dot-hidden --overlay --rename --symlinks --free --progress" ;;
        disk) echo "-h --help --table --part --definitions --copy-source -s --size --align --disk-id --volume-id --force --local-time --dot-hidden --overlay --rename --symlinks --json -q --quiet --progress" ;;
        dump) echo "-h --help --json --what --metadata-image --force --no-logfile --scramble-names -q --quiet --codepage" ;;
        fsck) echo "-h --help -n --no-changes -y --yes -a -p --undo -f --salvage --json -v -l --verbose -V -w -r -t --list-codes -q --quiet --codepage --progress" ;;
        slack) echo "-h --help --from-list -t --type --for -c --cluster --volume-size --tolerance --json --csv --wide --columns -o --output --chart --top --verify --threads -q --quiet --codepage --progress" ;;
        ls) echo "-h --help -l -R --short-names --deleted --json -q --quiet --codepage" ;;
        cat) echo "-h --help --deleted --salvage -q --quiet --codepage" ;;
        extract) echo "-h --help -C --directory --force --force-crosslinked --salvage --deleted --partial --utc -v --verbose --streams -q --quiet --codepage --progress" ;;
        cp) echo "-h --help -r -R --recursive -f --force -p --preserve --json --force-unsafe --check -q --quiet --codepage" ;;
        rm) echo "-h --help -r -R --recursive -f --force --json --force-unsafe --check -q --quiet --codepage" ;;
        mkdir) echo "-h --help -p --parents --json --force-unsafe --check -q --quiet --codepage" ;;
        mv) echo "-h --help -f --force --json --force-unsafe --check -q --quiet --codepage" ;;
        label) echo "-h --help --volume-id --json --force-unsafe --check -q --quiet --codepage" ;;
        attrib) echo "--json --force-unsafe --check --help -q --quiet --codepage" ;;
        undo) echo "-h --help -q --quiet --codepage" ;;
        help) echo "-h --help" ;;
    esac
}

_fsimg() {
    local cur prev words cword
    _init_completion || return
    local commands="mkfs disk dump fsck slack ls cat extract cp rm mkdir mv label attrib undo help"
    local cmd="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            -*) ;;
            *) cmd=${words[i]}; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    if [[ $cmd == help && $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    case $prev in
        -t | --type)
            if [[ $cmd == mkfs ]]; then
                COMPREPLY=($(compgen -W "fat12 fat16 fat32 fat exfat ntfs" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "fat32 exfat ntfs fat32,exfat fat32,exfat,ntfs" -- "$cur"))
            fi
            return ;;
        --partition-table) COMPREPLY=($(compgen -W "none mbr gpt" -- "$cur")); return ;;
        --table) COMPREPLY=($(compgen -W "mbr gpt" -- "$cur")); return ;;
        --part) COMPREPLY=($(compgen -W "size= start= type= name= uuid= bootable fs= label= cluster= volume-id= from= free= image=" -- "$cur")); compopt -o nospace; return ;;
        --partition-type)
            COMPREPLY=($(compgen -W "esp linux linux-swap basic-data fat12 fat16 fat16-lba fat32 fat32-lba exfat ntfs bios-boot" -- "$cur"))
            return ;;
        --partition-start | --disk-id | --partition-uuid | --partition-name | --hidden-sectors) return ;;
        --sector-size) COMPREPLY=($(compgen -W "512 1024 2048 4096" -- "$cur")); return ;;
        --mft-record-size) COMPREPLY=($(compgen -W "1024 4096" -- "$cur")); return ;;
        --symlinks) COMPREPLY=($(compgen -W "skip follow error" -- "$cur")); return ;;
        --what) COMPREPLY=($(compgen -W "boot fat bitmap dir extents mft index" -- "$cur")); return ;;
        --codepage) COMPREPLY=($(compgen -W "437 850" -- "$cur")); return ;;
        --check) COMPREPLY=($(compgen -W "auto whole touched" -- "$cur")); return ;;
        --for) COMPREPLY=($(compgen -W "camera sdxc sdhc windows macos linux tv console car uefi" -- "$cur")); return ;;
        -c | --cluster-size | --cluster)
            COMPREPLY=($(compgen -W "512 1K 2K 4K 8K 16K 32K 64K 128K 256K 1M" -- "$cur"))
            return ;;
        -s | --size | --align | --free | --volume-size | --volume-id | -L | --label | --tolerance | --top | --threads)
            return ;;
        -C | --directory | --from | --definitions | --copy-source)
            _filedir -d
            return ;;
    esac
    # attrib: after IMAGE, -a -h -r -s (and +a...) are attribute changes, not options.
    if [[ $cmd == attrib && ($cur == -* || $cur == +*) ]]; then
        local j seen=0
        for ((j = i + 1; j < cword; j++)); do
            case ${words[j]} in
                --codepage | --check) ((j++)) ;;
                -*) ;;
                *) seen=1; break ;;
            esac
        done
        if ((seen)); then
            COMPREPLY=($(compgen -W "+r -r +h -h +s -s +a -a --json -q --quiet --codepage" -- "$cur"))
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_fsimg_options "$cmd")" -- "$cur"))
        return
    fi
    _filedir
}
complete -F _fsimg fsimg
